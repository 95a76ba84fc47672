@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import FormDataKit
@testable import FormDataKitAF
import Testing

/// The AF façade hands its bodies to a transport through the same policy as `FormDataRequest`
/// (`BodyDelivery`): parts for a streaming transport, bytes up to the transport's limit, one
/// spool beyond; a compressed body is compressed from the parts, never from a spool.
@Suite("AF body delivery: the engine's policy")
struct AFBodyDeliveryTests {
    /// A transport that is never started: it only states what it takes.
    struct Accepting: FormDataTransport {
        var acceptedBodyForms: TransportBodyForms
        var inMemoryBodyLimit: UInt64
        func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
            preconditionFailure("never sent")
        }
    }

    static func multipartRequest(fileSize: Int) throws -> (URLRequest, String) {
        let directory = NSTemporaryDirectory() + "af-delivery-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/data.bin"
        try Data((0..<fileSize).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: path))
        let request = try AFHTTPRequestSerializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://127.0.0.1/upload", parameters: ["k": "v"]
        ) { form in
            try form.appendPart(withFileURL: URL(fileURLWithPath: path), name: "file")
        }
        return (request, directory)
    }

    @Test("streaming transport: the parts; URLSession-like: bytes up to its limit, one spool beyond")
    func forms() throws {
        let (request, directory) = try Self.multipartRequest(fileSize: 200_000)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = try #require((request.httpBodyStream as? AFMultipartBodyStream)?.bodySource)
        let expected = try source.readAll()

        let streamed = try AFPreparedRequest(request, additionalHeaders: nil, for: Accepting(acceptedBodyForms: .all, inMemoryBodyLimit: 0))
        #expect(streamed.request.body == .source(source))
        #expect(streamed.spooledBody == nil)

        let inMemory = try AFPreparedRequest(
            request, additionalHeaders: nil,
            for: Accepting(acceptedBodyForms: [.bytes, .file], inMemoryBodyLimit: 1 << 20))
        #expect(inMemory.request.body == .data(expected))
        #expect(inMemory.spooledBody == nil)

        let spooled = try AFPreparedRequest(
            request, additionalHeaders: nil,
            for: Accepting(acceptedBodyForms: [.bytes, .file], inMemoryBodyLimit: 1000))
        let spool = try #require(spooled.spooledBody)
        #expect(spooled.request.body == .file(path: spool.path, length: UInt64(expected.count)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: spool.path)) == expected)
        spool.remove()
    }

    @Test("compressed: straight from the parts (no uncompressed spool), inflating to the body")
    func compressedFromParts() throws {
        let (request, directory) = try Self.multipartRequest(fileSize: 3 << 20)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = try #require((request.httpBodyStream as? AFMultipartBodyStream)?.bodySource)
        let prepared = try AFPreparedRequest(
            request, additionalHeaders: nil,
            for: Accepting(acceptedBodyForms: [.bytes, .file], inMemoryBodyLimit: 1000), compressing: true)
        // The one temporary file is the compressed body (3 MiB is over the 1 MiB in-memory limit).
        let file = try #require(prepared.spooledBody)
        #expect((file.path as NSString).lastPathComponent.hasPrefix("af-gzip"))
        #expect(prepared.request.header("Content-Encoding") == "gzip")
        guard case .file(let path, let length) = prepared.request.body else {
            Issue.record("expected the compressed file, got \(prepared.request.body)")
            return
        }
        #expect(path == file.path)
        let compressed = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(UInt64(compressed.count) == length)
        #expect(try DataDecompressor.uncompressData(compressed) == source.readAll())
        file.remove()
    }
}
