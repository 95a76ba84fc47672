import FormDataKitWire
import CZlib
import Foundation

/// A streaming decompressor over the system zlib that accepts gzip or zlib data (inflate with
/// windowBits 15 + 32, header auto-detected — ASIHTTPRequest's setting). The transport uses it
/// for `Content-Encoding: gzip` responses.
///
/// Feed compressed chunks of any size with ``decompress(_:into:)``; decompressed bytes go to the
/// sink in pieces of at most ``outputCapacity`` bytes. Call ``finish()`` after the last chunk: a
/// stream that did not reach its end is truncated and throws. Bytes after the end of the stream
/// are ignored (as ASIHTTPRequest did). With an ``outputLimit``, producing more than that many
/// bytes throws ``FormDataError/decompressedSizeLimitExceeded(limit:)`` before the excess reaches
/// the sink (a defence against decompression bombs). Corrupt data throws
/// ``FormDataError/decompressionFailed(code:message:)``; it never crashes.
///
/// The `z_stream` lives at a stable allocated address. One inflater per task; not thread-safe.
package final class GzipInflater {
    /// Receives each piece of decompressed output. The buffer is valid only during the call.
    package typealias Sink = (UnsafeRawBufferPointer) throws(FormDataError) -> Void

    /// The default output buffer: 256 KiB.
    static let defaultOutputCapacity = 256 * 1024

    /// The size of the output buffer.
    let outputCapacity: Int
    /// The most decompressed bytes allowed, or nil for no limit.
    let outputLimit: UInt64?
    /// Compressed bytes consumed so far.
    private(set) var bytesIn: UInt64 = 0
    /// Decompressed bytes produced so far.
    private(set) var bytesOut: UInt64 = 0
    /// Whether the end of the compressed stream (with a verified check value) has been reached.
    private(set) var isFinished = false

    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer

    /// An inflater that allows at most `outputLimit` decompressed bytes (nil: no limit).
    package init(outputLimit: UInt64? = nil, outputCapacity: Int = defaultOutputCapacity) throws(FormDataError) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = czlib_inflateInit2(stream, ZlibSupport.autoDetectWindowBits)
        guard code == Z_OK else {
            let message = ZlibSupport.message(code, stream: stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .decompressionFailed(code: code, message: message)
        }
        self.stream = stream
        self.outputLimit = outputLimit
        self.outputCapacity = max(outputCapacity, 4096)
        self.output = .allocate(byteCount: self.outputCapacity, alignment: 16)
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Decompresses `input`, passing the output to `sink`. Returns how many bytes of `input` were
    /// part of the stream: all of them, unless the stream ended inside `input` (the rest is
    /// trailing data and is ignored). After the end, further input is ignored (returns 0).
    @discardableResult
    func decompress(_ input: UnsafeRawBufferPointer, into sink: Sink) throws(FormDataError) -> Int {
        guard !isFinished, var base = input.baseAddress, input.count > 0 else { return 0 }
        var left = input.count
        var used = 0
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while left > 0 && !isFinished {
            let step = min(left, 1 << 30)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(step)
            try drive(into: sink)
            let consumed = step - Int(stream.pointee.avail_in)
            bytesIn += UInt64(consumed)
            used += consumed
            base += step
            left -= step
        }
        return used
    }

    /// Decompresses `data`, passing the output to `sink`, like the buffer variant.
    @discardableResult
    package func decompress(_ data: Data, into sink: Sink) throws(FormDataError) -> Int {
        let result: Result<Int, FormDataError> = data.withUnsafeBytes { bytes in
            do throws(FormDataError) { return .success(try decompress(bytes, into: sink)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Throws unless the compressed stream reached its end: input that stops early is truncated.
    package func finish() throws(FormDataError) {
        guard isFinished else {
            throw .decompressionFailed(
                code: Z_BUF_ERROR,
                message: "the compressed data is truncated (ended after \(bytesIn) bytes, before the end of the stream)")
        }
    }

    /// Calls `inflate` until the input is used up and no output is pending, or the stream ends.
    private func drive(into sink: Sink) throws(FormDataError) {
        while true {
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(outputCapacity)
            stream.pointee.msg = nil  // zlib never clears it; keep error texts current
            let code = inflate(stream, Z_NO_FLUSH)
            let produced = outputCapacity - Int(stream.pointee.avail_out)
            if produced > 0 {
                if let limit = outputLimit, bytesOut + UInt64(produced) > limit {
                    throw .decompressedSizeLimitExceeded(limit: limit)
                }
                bytesOut += UInt64(produced)
                try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced]))
            }
            switch code {
            case Z_STREAM_END:
                isFinished = true
                return
            case Z_OK:
                break
            case Z_BUF_ERROR where stream.pointee.avail_in == 0:
                // Everything given is consumed; more input is needed.
                return
            case Z_NEED_DICT:
                throw .decompressionFailed(code: code, message: "the data needs a preset dictionary, which HTTP bodies never use")
            default:
                throw .decompressionFailed(code: code, message: ZlibSupport.message(code, stream: stream))
            }
            if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return }
        }
    }
}
