import FormDataKit
import Foundation

/// The `httpBodyStream` of a multipart request: an `InputStream` over the engine's
/// `BodySource` (in-memory segments and file ranges, exact length), read with bounded memory.
///
/// Unlike AFNetworking's stream it never hops to the main thread, never reports "no bytes
/// available" before the end, and can be read again through ``copy(with:)`` (each copy starts at
/// the beginning; parts from caller input streams were captured when appended). A file that
/// changed size since its part was appended makes `read` fail with the `FormDataError` as
/// ``streamError``. Use one stream on one thread at a time.
public final class AFMultipartBodyStream: InputStream, NSCopying {
    /// The body's segments and exact length.
    public let bodySource: BodySource
    /// The most bytes one `read` returns (`Int.max` unless throttled).
    public let numberOfBytesInPacket: Int
    /// Seconds to sleep after each piece a `read` copies (0 unless throttled).
    public let delay: TimeInterval

    private let temporaryFiles: [TemporaryFile]
    private var reader: BodyReader?
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    /// A stream over `source`; `temporaryFiles` (captured input-stream parts) stay on disk as long
    /// as this stream or a copy of it exists.
    init(source: BodySource, packetSize: Int, delay: TimeInterval, keeping temporaryFiles: [TemporaryFile]) {
        self.bodySource = source
        self.numberOfBytesInPacket = max(1, packetSize)
        self.delay = delay
        self.temporaryFiles = temporaryFiles
        super.init(data: Data())
    }

    /// The body's length in bytes (the request's Content-Length).
    public var contentLength: UInt64 { bodySource.length }

    /// The temporary files this stream keeps alive, for code that reads ``bodySource`` elsewhere.
    public var retainedTemporaryFiles: [TemporaryFile] { temporaryFiles }

    /// A new, unopened stream over the same body (what a transport asks for to send it again).
    /// - Parameter zone: ignored.
    /// - Returns: the new stream.
    public func copy(with zone: NSZone? = nil) -> Any {
        AFMultipartBodyStream(source: bodySource, packetSize: numberOfBytesInPacket, delay: delay, keeping: temporaryFiles)
    }

    /// Opens the stream at the start of the body (once; later calls do nothing).
    public override func open() {
        guard status == .notOpen else { return }
        reader = bodySource.makeReader(chunkSize: 256 * 1024)
        status = bodySource.length == 0 ? .atEnd : .open
    }

    /// Closes the stream; reads return 0 afterwards.
    public override func close() {
        reader = nil
        if status != .error { status = .closed }
    }

    /// `.notOpen`, `.open`, `.atEnd` once every byte was read, `.closed`, or `.error`.
    public override var streamStatus: Stream.Status { status }

    /// The error that stopped reading, if any.
    public override var streamError: (any Error)? { failure }

    /// Whether bytes remain (true from open until the last byte has been read).
    public override var hasBytesAvailable: Bool { status == .open }

    /// Copies up to `len` bytes (at most ``numberOfBytesInPacket``) into `buffer`; 0 at the end,
    /// -1 on an error (see ``streamError``).
    /// - Parameters:
    ///   - buffer: where the bytes go.
    ///   - len: the most bytes to copy.
    /// - Returns: the number of bytes copied, 0 at the end, -1 on an error.
    public override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open, let reader else {
            return status == .error ? -1 : 0
        }
        let limit = min(len, numberOfBytesInPacket)
        var total = 0
        while total < limit {
            let got: Int
            do {
                got = try reader.read(into: UnsafeMutableRawBufferPointer(start: buffer + total, count: limit - total))
            } catch {
                failure = error
                status = .error
                return total > 0 ? total : -1
            }
            if got == 0 { break }
            total += got
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        }
        if reader.isAtEnd { status = .atEnd }
        return total
    }

    /// Always false: bytes are only copied out by `read`.
    /// - Parameters:
    ///   - buffer: not used.
    ///   - len: not used.
    /// - Returns: false.
    public override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    /// No properties are supported.
    /// - Parameter key: the property asked for.
    /// - Returns: nil.
    public override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }

    /// No properties are supported; returns false.
    /// - Parameters:
    ///   - property: not stored.
    ///   - key: the property's key.
    /// - Returns: false.
    public override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }
}
