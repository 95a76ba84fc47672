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
        guard stat(path, &info) == 0 else { throw AFURLRequestSerializationError.fileNotReachable(fileURL) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw AFURLRequestSerializationError.fileIsDirectory(fileURL) }
        try HeaderParameterEscaping.requireSafeHeaderValue(mimeType, field: name)
        let size = try FileInspection.regularFileSize(at: path)
        parts.append(filePart(
            name: name, fileName: fileName, mimeType: mimeType,
            content: .file(FileRange(path: path, length: size, expectedFileSize: size))))
    }

    func appendPart(with inputStream: InputStream?, name: String, fileName: String, length: Int64, mimeType: String) {
        record {
            try HeaderParameterEscaping.requireSafeHeaderValue(mimeType, field: name)
            let content = try readStream(inputStream, name: name, length: length)
            parts.append(filePart(name: name, fileName: fileName, mimeType: mimeType, content: content))
        }
    }

    func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String) {
        record {
            try HeaderParameterEscaping.requireSafeHeaderValue(mimeType, field: name)
            parts.append(filePart(name: name, fileName: fileName, mimeType: mimeType, content: .data(data)))
        }
    }

    func appendPart(withForm data: Data, name: String) {
        parts.append(MultipartPart(
            fieldName: name,
            headers: [MultipartHeader(
                name: "Content-Disposition",
                value: HeaderParameterEscaping.formDataDisposition(name: name, fileName: nil))],
            content: .data(data), contentType: nil))
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
            parts.append(MultipartPart(
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
        if let fixedBoundary, !AFMultipartBoundary.isValid(fixedBoundary) {
            throw AFURLRequestSerializationError.invalidBoundary(fixedBoundary)
        }
        var attempt = 0
        var boundary = fixedBoundary ?? AFMultipartBoundary.make()
        var source = BodySource.empty
        while true {
            do {
                source = try Self.encode(parts, boundary: boundary, scanFiles: fixedBoundary != nil)
                break
            } catch {
                guard case .boundaryCollision = error, fixedBoundary == nil, attempt < 15 else { throw error }
                attempt += 1
                boundary = AFMultipartBoundary.make()
            }
        }
        var result = request
        result.httpBodyStream = AFMultipartBodyStream(
            source: source, packetSize: packetSize, delay: delay, keeping: temporaryFiles)
        result.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        result.setValue(String(source.length), forHTTPHeaderField: "Content-Length")
        return result
    }

    /// The body of `parts` with `boundary`, in AFNetworking's layout (the engine's writer). With
    /// `scanFiles` (a boundary the caller fixed) file parts are checked for it too.
    private static func encode(_ parts: [MultipartPart], boundary: String, scanFiles: Bool) throws(FormDataError) -> BodySource {
        var builder = BodyBuilder(encoding: .utf8, debug: false)
        try MultipartWriter(boundary: boundary, scanFileContent: scanFiles).write(parts, into: &builder)
        return builder.finish()
    }

    // MARK: - Helpers

    private func filePart(name: String, fileName: String, mimeType: String, content: MultipartPart.Content) -> MultipartPart {
        MultipartPart(
            fieldName: name,
            headers: [
                MultipartHeader(
                    name: "Content-Disposition",
                    value: HeaderParameterEscaping.formDataDisposition(name: name, fileName: fileName)),
                MultipartHeader(name: "Content-Type", value: mimeType),
            ],
            content: content, contentType: mimeType)
    }

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
        if stream.streamStatus == .notOpen { stream.open() }
        defer { stream.close() }
        if length <= Self.inMemoryStreamLimit {
            var data = Data()
            data.reserveCapacity(Int(length))
            try copy(stream, name: name, length: length) { chunk in data.append(contentsOf: chunk) }
            return .data(data)
        }
        let (file, descriptor) = try TemporaryStorage.makeFile(purpose: "af-stream-part")
        defer { close(descriptor) }
        do {
            try copy(stream, name: name, length: length) { chunk in
                try BodySpooler.writeAll(chunk, to: descriptor, path: file.path)
            }
        } catch {
            file.remove()
            throw error
        }
        temporaryFiles.append(file)
        let size = UInt64(length)
        return .file(FileRange(path: file.path, length: size, expectedFileSize: size))
    }

    /// Reads `length` bytes of the open `stream` in chunks, then checks that it has no more.
    private func copy(
        _ stream: InputStream, name: String, length: Int64, into sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let chunkSize = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        var read: Int64 = 0
        while read < length {
            let got = stream.read(buffer, maxLength: Int(min(Int64(chunkSize), length - read)))
            if got < 0 {
                let message = stream.streamError.map { String(describing: $0) } ?? "read failed"
                throw AFURLRequestSerializationError.inputStreamFailed(name: name, message: message)
            }
            if got == 0 {
                throw AFURLRequestSerializationError.inputStreamTooShort(name: name, expected: length, read: read)
            }
            try sink(UnsafeRawBufferPointer(start: buffer, count: got))
            read += Int64(got)
        }
        if stream.hasBytesAvailable, stream.read(buffer, maxLength: 1) > 0 {
            throw AFURLRequestSerializationError.inputStreamTooLong(name: name, expected: length)
        }
    }
}
