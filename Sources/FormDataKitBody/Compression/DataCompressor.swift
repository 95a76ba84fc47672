import FormDataKitWire
import Foundation

/// gzip compression for code that called ASIHTTPRequest's `ASIDataCompressor` directly.
///
/// The output is a gzip stream (RFC 1952) made by zlib at its default level (6) with
/// ASIHTTPRequest's settings. Unlike `ASIDataCompressor`, an empty input, a 1-byte input and a
/// file whose size is an exact multiple of 256 KiB all give complete, valid gzip (the empty input
/// gives the 20-byte gzip of nothing). The header's OS byte depends on the zlib build, so compare
/// results by decompressing them, not byte for byte.
public enum DataCompressor {
    /// Compresses `data` into one gzip stream (`+[ASIDataCompressor compressData:error:]`).
    ///
    /// - Throws: `FormDataError.compressionFailed(code:message:)` when zlib fails.
    /// - Parameter data: the bytes to compress.
    /// - Returns: a gzip stream (zlib level 6) that inflates to `data`.
    public static func compressData(_ data: Data) throws -> Data {
        let deflater = try GzipDeflater()
        var out = Data()
        out.reserveCapacity(min(data.count / 2 + 64, 1 << 24))
        let sink: GzipDeflater.Sink = { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
        try deflater.compress(data, into: sink)
        try deflater.finish(into: sink)
        return out
    }

    /// Compresses the file at `source` into a gzip file at `destination`, replacing it
    /// (`+[ASIDataCompressor compressDataFromFile:toFile:error:]`). Streams with bounded memory
    /// (1 MiB reads).
    ///
    /// The destination appears complete or not at all: the output is written next to it under a
    /// hidden name and renamed into place at the end, so a failure leaves no partial file and an
    /// existing file at `destination` untouched. `source` and `destination` may be the same path.
    ///
    /// - Throws: `FormDataError.fileNotFound(path:)` when `source` does not exist,
    ///   `FormDataError.fileIsDirectory(path:)`, `FormDataError.notARegularFile(path:kind:)` or
    ///   `FormDataError.fileUnreadable(path:errno:)` for other source problems, `FormDataError.fileChanged(path:expectedSize:actualSize:)`
    ///   when the source changes size while it is read, `FormDataError.fileUnwritable(path:errno:)`
    ///   when the destination cannot be written, `FormDataError.compressionFailed(code:message:)`
    ///   when zlib fails.
    /// - Parameters:
    ///   - source: the path of the file to compress.
    ///   - destination: the path of the gzip file to write (replaced atomically; may be `source`).
    public static func compressDataFromFile(_ source: String, toFile destination: String) throws {
        let size = try FileInspection.regularFileSize(at: source)
        let body = BodySource(segments: [
            BodySegment(.file(FileRange(path: source, length: size, expectedFileSize: size)))
        ])
        try DestinationFile.write(to: destination) { (sink) throws(FormDataError) in
            try BodyCompressor.compress(body, settings: CompressionSettings(adaptive: false), into: sink)
        }
    }
}
