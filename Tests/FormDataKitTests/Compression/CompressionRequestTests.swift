@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import CZlib
import Foundation
import Testing
@testable import FormDataKit

/// `FormDataRequest.shouldCompressRequestBody`: headers, lengths, storage and cleanup.
@Suite("Compression: FormDataRequest")
struct CompressionRequestTests {
    static func request() -> FormDataRequest {
        let request = FormDataRequest(url: URL(string: "http://example.com/form")!)
        request.multipartBoundary = "0xKhTmLbOuNdArY-COMPRESSION-TEST"
        return request
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    @Test("no body: no Content-Encoding, no Content-Length, nothing compressed")
    func emptyForm() throws {
        let request = Self.request()
        request.shouldCompressRequestBody = true
        try request.buildPostBody()
        #expect(request.requestHeaders["Content-Encoding"] == nil)
        #expect(request.requestHeaders["Content-Length"] == nil)
        #expect(request.postLength == 0)
        #expect(request.compressedPostBody == nil)
        #expect(request.compressedPostBodyFilePath == nil)
        #expect(request.state.withLock { $0.built?.contentEncoding } == nil)
        guard case .none? = try request.state.withLock({ $0.built })?.delivered(to: [.bytes, .file], inMemoryLimit: 0).body else {
            Issue.record("expected no body to send")
            return
        }
    }

    @Test("small URL-encoded body: compressed in memory, lengths are the compressed size")
    func smallInMemory() throws {
        let request = Self.request()
        request.shouldCompressRequestBody = true
        request.setPostValue("Ben Copsey", forKey: "name")
        request.setPostValue(String(repeating: "lorem ipsum ", count: 200), forKey: "text")
        try request.buildPostBody()
        let compressed = try #require(request.compressedPostBody)
        let plain = try #require(request.postBody)
        #expect(try DataDecompressor.uncompressData(compressed) == plain)
        #expect(request.postLength == UInt64(compressed.count))
        #expect(request.requestHeaders["Content-Length"] == String(compressed.count))
        #expect(request.requestHeaders["Content-Encoding"] == "gzip")
        #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(request.compressedPostBodyFilePath == nil)
        guard case .data(let wire)? = try request.state.withLock({ $0.built })?.delivered(to: [.bytes, .file], inMemoryLimit: 0).body else {
            Issue.record("expected the body sent from memory")
            return
        }
        #expect(wire == compressed)
    }

    @Test("form with files: compressed straight to a temp file, never spooled; removed on rebuild and deinit")
    func filesCompressedToDiskAndCleanedUp() async throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let photo = scratch + "/photo.jpg"
        let photoBytes = TestBytes.random(700_000, seed: 9)
        try photoBytes.write(to: URL(fileURLWithPath: photo))

        var request: FormDataRequest? = Self.request()
        request!.shouldCompressRequestBody = true
        request!.setPostValue("holiday", forKey: "album")
        try request!.addFile(photo, forKey: "photo")
        try request!.buildPostBody()

        #expect(request!.postBodyFilePath == nil)
        #expect(request!.compressedPostBody == nil)
        let firstPath = try #require(request!.compressedPostBodyFilePath)
        #expect(Self.exists(firstPath))
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: firstPath))
        #expect(request!.postLength == UInt64(onDisk.count))
        #expect(request!.requestHeaders["Content-Length"] == String(onDisk.count))
        #expect(request!.requestHeaders["Content-Encoding"] == "gzip")
        let plain = try #require(request!.bodySource).readAll()
        #expect(try await CompressionOracles.verifiedInflation(of: firstPath) == plain)
        do {
            // A transport that takes files is given the compressed file itself.
            guard
                case .file(let wirePath, _)? = try request!.state.withLock({ $0.built })?.delivered(to: [.bytes, .file], inMemoryLimit: 0)
                    .body
            else {
                Issue.record("expected the body sent from a file")
                return
            }
            #expect(wirePath == firstPath)
        }

        // A change makes the body stale: the compressed file goes at once, headers too.
        request!.compressionLevel = 1
        #expect(!Self.exists(firstPath))
        #expect(request!.requestHeaders["Content-Encoding"] == nil)
        #expect(request!.requestHeaders["Content-Length"] == nil)

        try request!.buildPostBody()
        let secondPath = try #require(request!.compressedPostBodyFilePath)
        #expect(secondPath != firstPath)
        #expect(try await CompressionOracles.verifiedInflation(of: secondPath) == plain)
        request = nil
        #expect(!Self.exists(secondPath))
    }

    @Test("switching compression off restores the spooled body and drops Content-Encoding")
    func switchOff() throws {
        let request = Self.request()
        request.shouldCompressRequestBody = true
        request.addData(TestBytes.text(50_000), withFileName: "a.txt", andContentType: "text/plain", forKey: "a")
        try request.buildPostBody()
        let compressedPath = try #require(request.compressedPostBodyFilePath)
        let compressedLength = request.postLength
        request.shouldCompressRequestBody = false
        try request.buildPostBody()
        #expect(!Self.exists(compressedPath))
        #expect(request.requestHeaders["Content-Encoding"] == nil)
        #expect(request.postBodyFilePath != nil)
        #expect(request.postLength == request.bodySource?.length)
        #expect(request.postLength > compressedLength)
    }

    @Test("streamed from disk: compressed to a temp file in one pass, nothing spooled uncompressed")
    func streamFromDiskCompresses() async throws {
        let request = Self.request()
        request.shouldCompressRequestBody = true
        request.shouldStreamPostDataFromDisk = true
        request.setPostValue("short value", forKey: "a")
        try request.buildPostBody()
        #expect(request.postBodyFilePath == nil)
        #expect(request.postBody == nil)
        #expect(request.compressedPostBody == nil)
        let path = try #require(request.compressedPostBodyFilePath)
        #expect(try await CompressionOracles.verifiedInflation(of: path) == Data("a=short%20value".utf8))
        #expect(request.requestHeaders["Content-Length"] == String(request.postLength))
        #expect(request.requestHeaders["Content-Encoding"] == "gzip")
    }

    @Test("a large in-memory body is compressed to a temp file; adaptive and level settings apply")
    func largeInMemoryGoesToFile() async throws {
        let request = Self.request()
        request.shouldCompressRequestBody = true
        request.postFormat = .multipartFormData
        request.setPostValue(String(decoding: TestBytes.text(1_500_000), as: UTF8.self), forKey: "essay")
        #expect(request.compressionLevel == 6)
        #expect(request.adaptiveCompression)
        request.compressionLevel = 9
        request.adaptiveCompression = false
        try request.buildPostBody()
        let path = try #require(request.compressedPostBodyFilePath)
        #expect(request.compressedPostBody == nil)
        #expect(try await CompressionOracles.verifiedInflation(of: path) == request.postBody)
    }

    @Test("an invalid level fails the build with a typed error")
    func invalidLevel() throws {
        let request = Self.request()
        request.shouldCompressRequestBody = true
        request.compressionLevel = 42
        request.addData(TestBytes.text(10_000), forKey: "f")
        #expect(throws: FormDataError.compressionFailed(code: Z_STREAM_ERROR, message: "invalid compression level 42 (use -1 or 0...9)")) {
            try request.buildPostBody()
        }
        #expect(request.requestHeaders["Content-Encoding"] == nil)
        #expect(request.postLength == 0)
    }

    @Test("a file that changes size mid-compression fails; the partial temp file is removed")
    func changedFileLeavesNothing() throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let path = scratch + "/grows.bin"
        try TestBytes.random(3 << 20).write(to: URL(fileURLWithPath: path))
        // 2 MiB of output is on disk before the file (recorded as 2 MiB, now 3 MiB) is reached.
        let source = BodySource(segments: [
            BodySegment(.bytes(TestBytes.random(2 << 20, seed: 4))),
            BodySegment(.file(FileRange(path: path, length: 2 << 20, expectedFileSize: 2 << 20))),
        ])
        let purpose = "gzip-test-\(UUID().uuidString)"
        #expect(throws: FormDataError.fileChanged(path: path, expectedSize: 2 << 20, actualSize: 3 << 20)) {
            _ = try BodyCompressor.compress(source, to: .temporaryFile, purpose: purpose)
        }
        _ = try TemporaryStorage.directory()
        #expect(TemporaryStorage.currentFiles().filter { $0.contains(purpose) }.isEmpty)
    }
}
