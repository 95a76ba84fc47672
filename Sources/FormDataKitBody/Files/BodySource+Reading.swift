import Foundation
import FormDataKitWire

// Reading a body's segments: in chunks, whole, or pulled by a reader.

extension BodySource {
    /// A reader over the body's bytes, in order.
    /// - Parameter chunkSize: the largest piece read from a file at a time (1 MiB by default).
    /// - Returns: a new reader at the start of the body (one per task: a reader is not thread-safe).
    public func makeReader(chunkSize: Int = BodyReader.defaultChunkSize) -> BodyReader {
        BodyReader(source: self, chunkSize: chunkSize, files: SystemFileOpening())
    }

    /// A reader over the body's bytes whose files `files` opens and closes; with
    /// `keepsFinishedFiles`, each stays open once read until ``BodyReader/takeFinishedFiles()``.
    func makeReader(chunkSize: Int, files: any FileOpening, keepsFinishedFiles: Bool = false) -> BodyReader {
        BodyReader(source: self, chunkSize: chunkSize, files: files, keepsFinishedFiles: keepsFinishedFiles)
    }

    /// Passes the body to `body` in order, with bounded memory: each in-memory segment whole (no
    /// copy), each file range in chunks of at most `chunkSize` bytes, read from disk and checked
    /// for size changes, each stream in chunks as it gives them (this blocks while it waits). The one walk over a body's segments for those that consume it whole
    /// (``readAll()``, the spooler); ``BodyReader`` is the pull-based one.
    /// - Parameters:
    ///   - chunkSize: the largest chunk read from a file at a time.
    ///   - body: receives each piece.
    /// - Throws: what reading a file or a stream throws (`FormDataError.fileChanged(path:expectedSize:actualSize:)`,
    ///   `FormDataError.streamLengthMismatch(field:declaredLength:streamedLength:)`
    ///   and the other file errors), or what `body` throws.
    public func forEachChunk(
        size chunkSize: Int = BodyReader.defaultChunkSize, _ body: (UnsafeRawBufferPointer) throws(FormDataError) -> Void
    ) throws(FormDataError) {
        for segment in segments {
            switch segment.content {
            case .bytes(let data):
                let failure: FormDataError? = data.withUnsafeBytes { bytes in
                    do throws(FormDataError) { try body(bytes) } catch { return error }
                    return nil
                }
                if let failure { throw failure }
            case .file(let range):
                try OpenedFileRange(range).forEachChunk(size: chunkSize, body)
            case .stream(let stream):
                let reader = try StreamSegmentReader(stream)
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
                defer { buffer.deallocate() }
                while true {
                    let got = try reader.read(into: buffer)
                    if got == 0 { break }
                    try body(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
                }
            }
        }
    }

    /// The whole body in memory. Files are read and checked against their recorded size.
    /// - Returns: the body's bytes.
    /// - Throws: what ``forEachChunk(size:_:)`` throws.
    public func readAll() throws(FormDataError) -> Data {
        if segments.isEmpty { return Data() }
        if segments.count == 1, case .bytes(let data) = segments[0].content { return data }
        var out = Data()
        out.reserveCapacity(Int(clamping: min(length, 1 << 30)))
        try forEachChunk { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
        return out
    }
}
