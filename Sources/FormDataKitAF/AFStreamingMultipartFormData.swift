#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ``AFMultipartFormData`` a multipart request's block appends to: collects the parts (as the
/// engine's `MultipartPart`s), then finalizes the request with an ``AFMultipartBodyStream``.
/// Used by one block on one thread.
final class AFStreamingMultipartFormData: AFMultipartFormData {
    /// Input-stream parts up to this size are kept in memory; larger ones go to a temporary file.
    static let inMemoryStreamLimit: Int64 = 1 << 20

    private var request: URLRequest
    private let fixedBoundary: String?
    private var parts: [MultipartPart] = []
    private var temporaryFiles: [TemporaryFile] = []
    private var firstError: (any Error)?
    private var packetSize = Int.max
    private var delay: TimeInterval = 0

    /// Parts for `request`, with `boundary` (nil: a random AFNetworking-shaped boundary).
    init(request: URLRequest, boundary: String?) {
        self.request = request
        self.fixedBoundary = boundary
    }

    // MARK: - AFMultipartFormData

    func appendPart(withFileURL fileURL: URL, name: String) throws {
        try appendPart(
            withFileURL: fileURL, name: name, fileName: fileURL.lastPathComponent,
            mimeType: AFMIMEType.forPathExtension(fileURL.pathExtension))
    }

    func appendPart(withFileURL fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        guard fileURL.isFileURL else { throw AFURLRequestSerializationError.notFileURL(fileURL) }
        let path = fileURL.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            // A name that is not UTF-8 (the URL's path has U+FFFD for its bytes) is refused
            // naming the real bytes (`bad\xFF.txt`).
            throw FileInspection.undecodedNameError(path: path) ?? AFURLRequestSerializationError.fileNotReachable(fileURL)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw AFURLRequestSerializationError.fileIsDirectory(fileURL) }
        try HeaderParameterEscaping.requireSafeHeaderValue(mimeType, field: name)
        let size = try FileInspection.regularFileSize(at: path)
        parts.append(
            .file(
                name: name, fileName: fileName, contentType: mimeType,
                content: .file(FileRange(path: path, length: size, expectedFileSize: size))))
    }

    func appendPart(with inputStream: InputStream?, name: String, fileName: String, length: Int64, mimeType: String) {
        record {
            try HeaderParameterEscaping.requireSafeHeaderValue(mimeType, field: name)
            let content: MultipartPart.Content
            if length == -1, let inputStream {
                // Unknown length (FormDataKit's addition): read while sent, chunked.
                content = .stream(StreamedContent(inputStream, length: nil, field: name))
            } else {
                content = try readStream(inputStream, name: name, length: length)
            }
            parts.append(.file(name: name, fileName: fileName, contentType: mimeType, content: content))
        }
    }

    func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String) {
        record {
            try HeaderParameterEscaping.requireSafeHeaderValue(mimeType, field: name)
            parts.append(.file(name: name, fileName: fileName, contentType: mimeType, content: .data(data)))
        }
    }

    func appendPart(withForm data: Data, name: String) {
        parts.append(.value(name: name, content: .data(data)))
    }

    func appendPart(withHeaders headers: [String: String]?, body: Data) {
        record {
            let headers = headers ?? [:]
            let label = headers.first { $0.key.lowercased() == "content-disposition" }?.value ?? "part \(parts.count + 1)"
            for (field, value) in headers {
                if field.isEmpty || field.contains(":") { throw FormDataError.invalidHeaderValue(field: label, value: field) }
                try HeaderParameterEscaping.requireSafeHeaderValue(field, field: label)
                try HeaderParameterEscaping.requireSafeHeaderValue(value, field: label)
            }
            let ordered = headers.sorted { lhs, rhs in
                let lhsFirst = lhs.key.lowercased() == "content-disposition"
                let rhsFirst = rhs.key.lowercased() == "content-disposition"
                if lhsFirst != rhsFirst { return lhsFirst }
                return lhs.key.lowercased() < rhs.key.lowercased()
            }
            let contentType = headers.first { $0.key.lowercased() == "content-type" }?.value
            parts.append(
                MultipartPart(
                    fieldName: label, headers: ordered.map { MultipartHeader(name: $0.key, value: $0.value) },
                    content: .data(body), contentType: contentType))
        }
    }

    func throttleBandwidth(withPacketSize numberOfBytes: Int, delay: TimeInterval) {
        packetSize = max(1, numberOfBytes)
        self.delay = max(0, delay)
    }

    // MARK: - Finalizing

    /// The request with the multipart body stream, `Content-Type: multipart/form-data;
    /// boundary=…` and the exact `Content-Length`; the request unchanged when nothing was
    /// appended. Throws the first failure a non-throwing append recorded.
    func requestByFinalizingMultipartFormData() throws -> URLRequest {
        if let firstError { throw firstError }
        guard !parts.isEmpty else { return request }
        if let fixedBoundary, !MultipartBoundary.isValid(fixedBoundary) {
            throw AFURLRequestSerializationError.invalidBoundary(fixedBoundary)
        }
        // The engine's encoder: AFNetworking's boundary shape, the same collision loop.
        var (builder, boundary) = try MultipartWriter.write(
            parts, boundary: fixedBoundary ?? MultipartBoundary.make(.afNetworking), fixed: fixedBoundary != nil,
            style: .afNetworking
        ) { _ in BodyBuilder(encoding: .utf8, debug: false) }
        let source = builder.finish()
        var result = request
        result.httpBodyStream = AFMultipartBodyStream(
            source: source, packetSize: packetSize, delay: delay, keeping: temporaryFiles)
        result.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        if source.isLengthKnown {
            result.setValue(String(source.length), forHTTPHeaderField: "Content-Length")
        } else {
            result.setValue("chunked", forHTTPHeaderField: "Transfer-Encoding")
        }
        return result
    }

    // MARK: - Helpers

    /// Runs `body`, keeping the first error it throws for ``requestByFinalizingMultipartFormData()``.
    private func record(_ body: () throws -> Void) {
        do { try body() } catch { if firstError == nil { firstError = error } }
    }

    /// Reads exactly `length` bytes of `stream` into memory or a temporary file.
    private func readStream(_ stream: InputStream?, name: String, length: Int64) throws -> MultipartPart.Content {
        guard length >= 0 else { throw AFURLRequestSerializationError.invalidInputStreamLength(name: name, length: length) }
        guard let stream else {
            if length == 0 { return .data(Data()) }
            throw AFURLRequestSerializationError.inputStreamTooShort(name: name, expected: length, read: 0)
        }
        if length <= Self.inMemoryStreamLimit {
            var data = Data()
            data.reserveCapacity(Int(length))
            try Self.read(stream, name: name, length: length) { chunk in data.append(contentsOf: chunk) }
            return .data(data)
        }
        let file = try TemporaryStorage.writeNewFile(purpose: "af-stream-part") { descriptor, path in
            try Self.read(stream, name: name, length: length) { chunk in
                try FileDescriptorWriting.writeAll(chunk, to: descriptor, path: path)
            }
        }
        temporaryFiles.append(file)
        let size = UInt64(length)
        return .file(FileRange(path: file.path, length: size, expectedFileSize: size))
    }

    /// Exactly `length` bytes of `stream` into `sink` (the engine's reader), its failures as AF's errors.
    private static func read(
        _ stream: InputStream, name: String, length: Int64, into sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        do {
            try InputStreamReading.read(stream, length: length, into: sink)
        } catch InputStreamReading.Failure.readFailed(let message) {
            throw AFURLRequestSerializationError.inputStreamFailed(name: name, message: message)
        } catch InputStreamReading.Failure.tooShort(let read) {
            throw AFURLRequestSerializationError.inputStreamTooShort(name: name, expected: length, read: read)
        } catch InputStreamReading.Failure.tooLong {
            throw AFURLRequestSerializationError.inputStreamTooLong(name: name, expected: length)
        }
    }
}
