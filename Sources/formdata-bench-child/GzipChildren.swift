import FormDataKit
import Foundation

/// The compressed-body children: W4 (a W3 form through `shouldCompressRequestBody`), W6 (one part
/// through the body compressor, adaptive on or off) and the RSS check of a large compressed body.
enum GzipChildren {
    /// `w4 LEVEL THREADS FILE...`: ten fields and the files as a compressed FormDataRequest body
    /// (compressed straight into its temporary file, which is removed on exit).
    static func w4(_ arguments: [String]) throws {
        guard arguments.count >= 3, let level = Int32(arguments[0]), let threads = Int(arguments[1]) else {
            throw ChildError.usage("w4 LEVEL THREADS FILE...")
        }
        let request = try W3Form.request(files: Array(arguments.dropFirst(2)))
        request.shouldCompressRequestBody = true
        request.compressionLevel = level
        request.compressionThreads = threads
        try request.buildPostBody()
        try checkCompressedFile(of: request)
    }

    /// `gzip MODE LEVEL ADAPTIVE TYPE THREADS FILE`: compresses FILE as one part typed TYPE on
    /// THREADS threads (0 = automatic). MODE `discard` streams to a sink that drops the bytes;
    /// `file` uses a temporary file.
    static func part(_ arguments: [String]) throws {
        guard arguments.count == 6, let level = Int32(arguments[1]), let threads = Int(arguments[4]) else {
            throw ChildError.usage("gzip MODE LEVEL ADAPTIVE TYPE THREADS FILE")
        }
        let (mode, adaptive, type, file) = (arguments[0], arguments[2] == "1", arguments[3], arguments[5])
        let size = ((try FileManager.default.attributesOfItem(atPath: file))[.size] as? NSNumber)?.uint64Value ?? 0
        let source = BodySource(segments: [
            BodySegment(.file(FileRange(path: file, length: size, expectedFileSize: size)), partContentType: type)
        ])
        let settings = CompressionSettings(level: level, adaptive: adaptive, threads: threads)
        if mode == "discard" {
            var total: UInt64 = 0
            try BodyCompressor.compress(source, settings: settings) { (chunk) throws(FormDataError) in total += UInt64(chunk.count) }
            guard total > 0 else { throw ChildError.failed("no output") }
        } else {
            let compressed = try BodyCompressor.compress(source, settings: settings, to: .temporaryFile)
            guard case .file(let temp, let length) = compressed, temp.size == length else {
                throw ChildError.failed("compressed size mismatch")
            }
        }
    }

    /// `gzip-request FILE`: a compressed FormDataRequest body of ten fields and FILE.
    static func request(file: String) throws {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/upload")!)
        request.shouldCompressRequestBody = true
        for index in 0..<10 { request.addPostValue("value \(index)", forKey: "field\(index)") }
        try request.addFile(file, withFileName: "data.bin", andContentType: "application/octet-stream", forKey: "file")
        try request.buildPostBody()
        try checkCompressedFile(of: request)
    }

    /// Fails unless the request's compressed temporary file is exactly `postLength` bytes.
    private static func checkCompressedFile(of request: FormDataRequest) throws {
        guard let path = request.compressedPostBodyFilePath,
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? UInt64,
            size == request.postLength
        else { throw ChildError.failed("compressed size does not match postLength") }
    }
}
