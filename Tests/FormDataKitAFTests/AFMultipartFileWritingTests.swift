import FormDataKit
import FormDataKitAF
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `request(withMultipartForm:writingStreamContentsToFile:…)`: the body on disk, the request
/// without its stream.
@Suite("AF multipart body written to a file")
struct AFMultipartFileWritingTests {
    private func multipartRequest(file: URL? = nil) throws -> URLRequest {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.multipartBoundary = TestSupport.boundary
        return try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: ["a": "1"]) {
            form in
            form.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "f.txt", mimeType: "text/plain")
            if let file { try form.appendPart(withFileURL: file, name: "disk") }
        }
    }

    @Test func completionHandlerVersionWritesTheExactBody() async throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try TestSupport.write(Data(repeating: 0x41, count: 200_000), named: "big.txt", in: directory)
        let request = try multipartRequest(file: source)
        let expected = try TestSupport.body(of: request)
        let destination = directory.appendingPathComponent("body.multipart")
        let serializer = AFHTTPRequestSerializer.serializer()
        let (stripped, error): (URLRequest, (any Error)?) = await withCheckedContinuation { continuation in
            let box = ResultBox()
            let stripped = serializer.request(withMultipartForm: request, writingStreamContentsToFile: destination) { error in
                box.finish(error, continuation: continuation)
            }
            box.setRequest(stripped, continuation: continuation)
        }
        #expect(error == nil)
        #expect(stripped.httpBodyStream == nil)
        #expect(stripped.httpBody == nil)
        #expect(stripped.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=\(TestSupport.boundary)")
        #expect(stripped.value(forHTTPHeaderField: "Content-Length") == String(expected.count))
        #expect(try Data(contentsOf: destination) == expected)
    }

    @Test func asyncVersionWritesTheReferenceBody() async throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body")
        let request = try multipartRequest()
        let stripped = try await AFHTTPRequestSerializer.serializer().request(
            withMultipartForm: request, writingStreamContentsToFile: destination)
        #expect(stripped.httpBodyStream == nil)
        #expect(try Data(contentsOf: destination).count == 231)
        #expect(stripped.value(forHTTPHeaderField: "Content-Length") == "231")
    }

    @Test func requestWithoutAMultipartStreamIsAnError() async throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = try AFHTTPRequestSerializer.serializer().request(
            withMethod: "POST", urlString: "http://example.com", parameters: ["a": "b"])
        await #expect(throws: AFURLRequestSerializationError.notMultipartRequest) {
            try await AFHTTPRequestSerializer.serializer().request(
                withMultipartForm: plain, writingStreamContentsToFile: directory.appendingPathComponent("x"))
        }
        let request = try multipartRequest()
        let web = URL(string: "http://example.com/x")!
        await #expect(throws: AFURLRequestSerializationError.notFileURL(web)) {
            try await AFHTTPRequestSerializer.serializer().request(withMultipartForm: request, writingStreamContentsToFile: web)
        }
    }

    @Test("the written file is 0600, replaces a symbolic link at the path instead of writing through it, and a failure keeps the old file")
    func writesPrivatelyWithoutFollowingLinks() async throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let victim = directory.appendingPathComponent("victim.txt")
        try Data("keep me".utf8).write(to: victim)
        let destination = directory.appendingPathComponent("body.bin")
        try FileManager.default.createSymbolicLink(at: destination, withDestinationURL: victim)
        let request = try multipartRequest()
        _ = try await AFHTTPRequestSerializer.serializer().request(withMultipartForm: request, writingStreamContentsToFile: destination)
        #expect(try Data(contentsOf: victim) == Data("keep me".utf8))
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try Data(contentsOf: destination).count == 231)
    }

    @Test func aFailedWriteLeavesNoFile() async throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try TestSupport.write(Data("short".utf8), named: "s.txt", in: directory)
        let request = try multipartRequest(file: source)
        try Data("longer now".utf8).write(to: source)
        let destination = directory.appendingPathComponent("body")
        await #expect(throws: FormDataError.fileChanged(path: source.path, expectedSize: 5, actualSize: 10)) {
            try await AFHTTPRequestSerializer.serializer().request(withMultipartForm: request, writingStreamContentsToFile: destination)
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}

/// Joins the completion handler's result with the returned request (either may come first).
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var request: URLRequest?
    private var error: (any Error)?
    private var finished = false

    func setRequest(_ request: URLRequest, continuation: CheckedContinuation<(URLRequest, (any Error)?), Never>) {
        lock.lock()
        self.request = request
        let done = finished
        lock.unlock()
        if done { continuation.resume(returning: (request, error)) }
    }

    func finish(_ error: (any Error)?, continuation: CheckedContinuation<(URLRequest, (any Error)?), Never>) {
        lock.lock()
        self.error = error
        finished = true
        let request = self.request
        lock.unlock()
        if let request { continuation.resume(returning: (request, error)) }
    }
}
