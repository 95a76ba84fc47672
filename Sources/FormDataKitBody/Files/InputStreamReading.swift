import FormDataKitWire
import Foundation

/// Reading a Foundation `InputStream` (a caller's body stream, an AF stream part) in chunks, with
/// bounded memory: the one reader of the package.
package enum InputStreamReading {
    /// Why reading a stream stopped short of what was asked.
    package enum Failure: Error, Equatable {
        /// `read` returned an error; the stream's own description of it.
        case readFailed(String)
        /// The stream ended after `read` bytes, before the length asked for.
        case tooShort(read: Int64)
        /// The stream had more bytes than the length asked for.
        case tooLong
    }

    /// How many bytes are read at a time.
    static let chunkSize = 64 * 1024

    /// Reads `stream` (opened first if it is not open, closed at the end) chunk by chunk into
    /// `sink`: to its end, or — with `length` — exactly that many bytes, then checks that nothing
    /// more follows.
    /// - Parameters:
    ///   - stream: the stream to read.
    ///   - length: the exact number of bytes expected, or nil to read to the end.
    ///   - sink: receives each chunk, in order.
    /// - Throws: ``Failure``, or what `sink` throws.
    package static func read(
        _ stream: InputStream, length: Int64? = nil, into sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        if stream.streamStatus == .notOpen { stream.open() }
        defer { stream.close() }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        var read: Int64 = 0
        while length.map({ read < $0 }) ?? true {
            let wanted = length.map { Int(min(Int64(chunkSize), $0 - read)) } ?? chunkSize
            let got = stream.read(buffer, maxLength: wanted)
            if got < 0 { throw Failure.readFailed(stream.streamError.map { String(describing: $0) } ?? "read failed") }
            if got == 0 {
                if length == nil { return }
                throw Failure.tooShort(read: read)
            }
            try sink(UnsafeRawBufferPointer(start: buffer, count: got))
            read += Int64(got)
        }
        if stream.hasBytesAvailable, stream.read(buffer, maxLength: 1) > 0 { throw Failure.tooLong }
    }

    /// Every byte of `stream`, in memory.
    /// - Parameter stream: the stream to read (opened if needed, closed after).
    /// - Returns: its bytes.
    /// - Throws: ``Failure/readFailed(_:)``.
    package static func readAll(_ stream: InputStream) throws -> Data {
        var data = Data()
        try read(stream) { data.append(contentsOf: $0) }
        return data
    }
}
