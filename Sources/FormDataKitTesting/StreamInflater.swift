import CZlib
import Foundation

/// Streaming gzip inflation for request bodies the receiver gets with `Content-Encoding: gzip`:
/// feed compressed chunks, get inflated chunks, with bounded memory.
final class StreamInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var ended = false
    private let buffer: UnsafeMutablePointer<UInt8>
    private let bufferSize = 256 * 1024

    /// Whether the whole compressed stream has been seen.
    private(set) var isFinished = false

    init() throws(FormParseError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        buffer = .allocate(capacity: bufferSize)
        guard czlib_inflateInit2(stream, 15 + 16) == Z_OK else {
            throw FormParseError(offset: 0, reason: "inflateInit2 failed")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        buffer.deallocate()
    }

    /// Inflates `chunk` (whose first byte is at `offset` in the compressed body), calling `sink`
    /// with each inflated piece.
    func feed(_ chunk: Data, offset: Int, sink: (UnsafeRawBufferPointer) -> Void) throws(FormParseError) {
        try feed(chunk, offset: offset) { (piece: UnsafeRawBufferPointer) -> Bool in
            sink(piece)
            return true
        }
    }

    /// Inflates `chunk` as ``feed(_:offset:sink:)`` does, piece by piece (at most 256 KiB each),
    /// until `sink` returns false: then it inflates nothing more of `chunk` (a caller over its
    /// limit stops at once, and feeds no more).
    func feed(_ chunk: Data, offset: Int, while sink: (UnsafeRawBufferPointer) -> Bool) throws(FormParseError) {
        var failure: FormParseError?
        chunk.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            guard let base = input.bindMemory(to: UInt8.self).baseAddress else { return }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base)
            stream.pointee.avail_in = uInt(input.count)
            while stream.pointee.avail_in > 0 || !isFinished {
                if isFinished {
                    // Another gzip member.
                    inflateReset(stream)
                    isFinished = false
                }
                stream.pointee.next_out = buffer
                stream.pointee.avail_out = uInt(bufferSize)
                let code = inflate(stream, Z_NO_FLUSH)
                let produced = bufferSize - Int(stream.pointee.avail_out)
                if produced > 0, !sink(UnsafeRawBufferPointer(start: buffer, count: produced)) { return }
                if code == Z_STREAM_END {
                    isFinished = true
                    continue
                }
                if code == Z_BUF_ERROR && stream.pointee.avail_in == 0 { break }
                if code != Z_OK {
                    let consumed = input.count - Int(stream.pointee.avail_in)
                    failure = FormParseError(offset: offset + consumed, reason: "Corrupt gzip body (zlib code \(code))")
                    return
                }
                if stream.pointee.avail_in == 0 && produced < bufferSize { break }
            }
        }
        if let failure { throw failure }
    }
}
