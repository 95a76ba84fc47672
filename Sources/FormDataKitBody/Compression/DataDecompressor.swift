import FormDataKitWire
import Foundation

/// gzip and zlib decompression for code that called ASIHTTPRequest's `ASIDataDecompressor`
/// directly. The header (gzip or zlib) is detected, as ASIHTTPRequest did; bytes after the end of
/// the compressed stream are ignored, as ASIHTTPRequest did.
public enum DataDecompressor {
    /// The read size for ``uncompressDataFromFile(_:toFile:)``: 1 MiB.
    static let readSize = 1 << 20

    /// Decompresses gzip or zlib `data` (`+[ASIDataDecompressor uncompressData:error:]`).
    /// An empty input gives empty data (a response with `Content-Encoding: gzip` and no body).
    ///
    /// - Parameters:
    ///   - data: gzip or zlib bytes.
    ///   - maximumSize: the most bytes the output may have (nil: no limit, as ASIHTTPRequest);
    ///     decompressing stops as soon as it would pass it (a decompression bomb).
    /// - Returns: the decompressed bytes.
    /// - Throws: `FormDataError.decompressionFailed(code:message:)` when the data is corrupt,
    ///   truncated or not gzip/zlib at all; `FormDataError.decompressedSizeLimitExceeded(limit:)`
    ///   past `maximumSize`.
    public static func uncompressData(_ data: Data, maximumSize: UInt64? = nil) throws -> Data {
        guard !data.isEmpty else { return Data() }
        let inflater = try GzipInflater(outputLimit: maximumSize)
        var out = Data()
        try inflater.decompress(data) { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
        try inflater.finish()
        return out
    }

    /// Decompresses the gzip or zlib file at `source` into a file at `destination`, replacing it
    /// (`+[ASIDataDecompressor uncompressDataFromFile:toFile:error:]`). Streams with bounded memory
    /// (ASIHTTPRequest's version grew with the file). An empty source gives an empty destination.
    ///
    /// The destination appears complete or not at all (written under a hidden name next to it,
    /// renamed into place at the end); a failure leaves no partial file.
    ///
    /// - Parameters:
    ///   - source: the compressed file.
    ///   - destination: the file to write (replaced whole, or left as it was).
    ///   - maximumSize: the most bytes the output may have (nil: no limit).
    /// - Throws: `FormDataError.fileNotFound(path:)` when `source` does not exist, other source
    ///   errors naming it, `FormDataError.fileUnwritable(path:errno:)` when the destination cannot
    ///   be written, `FormDataError.decompressionFailed(code:message:)` for corrupt or truncated data,
    ///   `FormDataError.decompressedSizeLimitExceeded(limit:)` past `maximumSize` (no file is left).
    public static func uncompressDataFromFile(_ source: String, toFile destination: String, maximumSize: UInt64? = nil) throws {
        let size = try FileInspection.regularFileSize(at: source)
        let input = try OpenedFileRange(FileRange(path: source, length: size, expectedFileSize: size))
        try DestinationFile.write(to: destination) { (sink) throws(FormDataError) in
            guard size > 0 else { return }
            let inflater = try GzipInflater(outputLimit: maximumSize)
            try input.forEachChunk(size: readSize) { (chunk) throws(FormDataError) in
                // Once the stream has ended the rest of the file is trailing data: skip it.
                if !inflater.isFinished { try inflater.decompress(chunk, into: sink) }
            }
            try inflater.finish()
        }
    }
}
