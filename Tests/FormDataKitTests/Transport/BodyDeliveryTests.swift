@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
@testable import FormDataKit
import FormDataKitTesting
import Testing

/// One body pipeline: the build does not depend on the transport, the transport's accepted forms
/// decide what a body becomes at send time (``BodyDelivery``), and `FormSnapshot(request)` is
/// what each transport put on the wire.
@Suite("Body delivery: one pipeline, decided at send time")
struct BodyDeliveryTests {
    typealias Support = TransportTestSupport

    static let parts = BodySource(segments: [
        BodySegment(.bytes(Data("head-".utf8))),
        BodySegment(.bytes(Data("tail".utf8))),
    ])

    @Test("the policy: streams to a streaming transport, bytes up to the limit, a spool beyond")
    func policy() throws {
        let file = try Support.makeFile(size: 3000, seed: 5)
        defer { file.remove() }
        let withFile = BodySource(segments: [
            BodySegment(.bytes(Data("a".utf8))),
            BodySegment(.file(FileRange(path: file.path, length: 3000, expectedFileSize: 3000))),
        ])
        // A streaming transport gets the segments themselves.
        let streamed = try BodyDelivery.deliver(withFile, to: .all, inMemoryLimit: 0)
        #expect(streamed.body == .source(withFile))
        #expect(streamed.temporaryFile == nil)
        // Up to the limit: read from the parts into memory, no file made.
        let inMemory = try BodyDelivery.deliver(withFile, to: [.bytes, .file], inMemoryLimit: 3001)
        #expect(inMemory.body == .data(Data("a".utf8) + file.data))
        #expect(inMemory.temporaryFile == nil)
        // All in memory: bytes whatever the limit.
        #expect(try BodyDelivery.deliver(Self.parts, to: [.bytes, .file], inMemoryLimit: 0).body == .data(Data("head-tail".utf8)))
        // Over the limit: one spool, of exactly the body.
        let spooled = try BodyDelivery.deliver(withFile, to: [.bytes, .file], inMemoryLimit: 3000)
        let spool = try #require(spooled.temporaryFile)
        #expect(spooled.body == .file(path: spool.path, length: 3001))
        #expect(try Data(contentsOf: URL(fileURLWithPath: spool.path)) == Data("a".utf8) + file.data)
        spool.remove()
        // A transport that takes only bytes gets bytes at any size; an existing spool is sent as a file.
        #expect(try BodyDelivery.deliver(withFile, to: .bytes, inMemoryLimit: 0).body == .data(Data("a".utf8) + file.data))
        let existing = try BodyDelivery.deliver(withFile, to: [.bytes, .file], inMemoryLimit: 0)
        let again = try BodyDelivery.deliver(withFile, to: [.bytes, .file], inMemoryLimit: 0, spooled: existing.temporaryFile)
        #expect(again.body == existing.body)
        #expect(again.temporaryFile == nil)
        // Empty: no body.
        #expect(try BodyDelivery.deliver(.empty, to: .all, inMemoryLimit: 0).body == .none)
    }

    @Test("a changed file fails delivery with fileChanged and leaves no spool")
    func changedFile() throws {
        let file = try Support.makeFile(size: 3000, seed: 6)
        defer { file.remove() }
        let source = BodySource(segments: [BodySegment(.file(FileRange(path: file.path, length: 2000, expectedFileSize: 2000)))])
        // A purpose of its own names the spool, so other tests' temporary files do not count.
        let purpose = "delivery-test-\(UInt32.random(in: 0...UInt32.max))"
        #expect(throws: FormDataError.fileChanged(path: file.path, expectedSize: 2000, actualSize: 3000)) {
            _ = try BodyDelivery.deliver(source, to: [.bytes, .file], inMemoryLimit: 0, purpose: purpose)
        }
        #expect(!TemporaryStorage.currentFiles().contains { $0.contains(purpose) })
    }

    @Test("the build's headers are not stored among the caller's: they follow the body")
    func headersFollowTheBody() throws {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/x")!)
        request.requestMethod = "GET"
        request.addRequestHeader("X-Mine", value: "1")
        request.setPostValue("v", forKey: "k")
        try request.buildPostBody()
        #expect(
            request.requestHeaders == [
                "X-Mine": "1", "Content-Type": "application/x-www-form-urlencoded; charset=utf-8", "Content-Length": "3",
            ])
        #expect(request.requestMethod == "POST")  // as ASIHTTPRequest showed it after a build
        #expect(request.state.withLock { $0.requestHeaders } == ["X-Mine": "1"])
        #expect(request.state.withLock { $0.requestMethod } == "GET")
        // Writing back what was read keeps only the caller's own headers.
        var headers = request.requestHeaders
        headers["X-Other"] = "2"
        request.requestHeaders = headers
        #expect(request.state.withLock { $0.requestHeaders } == ["X-Mine": "1", "X-Other": "2"])
        // A stale body shows none of the build's headers, and the method the caller set.
        request.setPostValue("longer", forKey: "k")
        #expect(request.requestHeaders == ["X-Mine": "1", "X-Other": "2"])
        #expect(request.requestMethod == "GET")
        try request.buildPostBody()
        #expect(request.requestHeaders["Content-Length"] == "8")
        #expect(request.requestMethod == "POST")
        // The caller's own Content-Type: the form's wins while the form sets one (as in ASI);
        // a raw body sets none, so the caller's comes back.
        request.addRequestHeader("Content-Type", value: "application/json")
        try request.buildPostBody()
        #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        let json = FormDataRequest(url: URL(string: "http://127.0.0.1/x")!)
        json.addRequestHeader("Content-Type", value: "application/json")
        json.setPostValue("v", forKey: "k")
        try json.buildPostBody()
        #expect(json.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        json.postBody = Data("{}".utf8)
        #expect(throws: FormDataError.rawBodyWithFormFields(field: "k")) { try json.buildPostBody() }
        let raw = FormDataRequest(url: URL(string: "http://127.0.0.1/x")!)
        raw.addRequestHeader("Content-Type", value: "application/json")
        raw.postBody = Data("{}".utf8)
        try raw.buildPostBody()
        #expect(raw.requestHeaders == ["Content-Type": "application/json", "Content-Length": "2"])
    }

    @Test("FormSnapshot(request) equals the capture of the sent request", arguments: TransportKind.allCases)
    func snapshotEqualsCapture(kind: TransportKind) async throws {
        try await Self.compareSnapshotWithCapture(transport: kind.transport, compressed: false)
        try await Self.compareSnapshotWithCapture(transport: kind.transport, compressed: true)
    }

    @Test("URLSession over its in-memory limit: the send spools once, sends that file, removes it")
    func urlSessionSpoolsAtSend() async throws {
        // A limit of 64 KiB on a transport of its own, so the 300 kB body is spooled (in the
        // process: the send is not cancelled, so FoundationNetworking's file reader is safe).
        let transport = URLSessionTransport(inMemoryFileBodyLimit: 64 << 10)
        let spools = try await Self.compareSnapshotWithCapture(transport: transport, compressed: false)
        #expect(spools.count == 1, "\(spools)")
        #expect(spools.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
    }

    /// Sends a form with a value and a 300 kB file through `transport` to a recording receiver and
    /// checks the request's snapshot (taken before the send, spooling nothing) against the capture.
    /// Returns the request's spooled body files seen during the send.
    @discardableResult
    static func compareSnapshotWithCapture(transport: any FormDataTransport, compressed: Bool) async throws -> [String] {
        let file = try Support.makeFile(size: 300_000, seed: 21, name: "photo.jpg")
        defer { file.remove() }
        let captures = URL(fileURLWithPath: file.directory).appendingPathComponent("captures")
        let receiver = try await FormReceiver.start(recordingDirectory: captures)
        do {
            let during = try await sendAndCompare(receiver: receiver, file: file, transport: transport, compressed: compressed)
            await receiver.stop()
            return during
        } catch {
            await receiver.stop()
            throw error
        }
    }

    private static func sendAndCompare(
        receiver: FormReceiver, file: ScratchFile, transport: any FormDataTransport,
        compressed: Bool
    ) async throws -> [String] {
        let request = FormDataRequest(url: receiver.url("/upload"))
        request.transport = transport
        request.timeOutSeconds = Support.patientTimeout
        request.shouldCompressRequestBody = compressed
        request.setPostValue("ünïcödé & more", forKey: "motto")
        try request.addFile(file.path, forKey: "photo")
        try request.buildPostBody()
        let snapshot = try FormSnapshot(request)
        #expect(!request.isPostBodySpooled, "the snapshot spooled")
        // The request's own spool while the send runs, if the delivery made one (other tests'
        // temporary files are not looked at: they run at the same time).
        let during = Locked<[String]>([])
        let delegate = RecordingDelegate(onSend: { request in
            if request.isPostBodySpooled, let path = request.postBodyFilePath {
                during.withLock { if !$0.contains(path) { $0.append(path) } }
            }
        })
        request.delegate = delegate
        await Support.blocking { request.startSynchronous() }
        #expect(request.error == nil)
        #expect(request.responseStatusCode == 200)
        let capture = try #require(receiver.lastRequest?.capturePath)
        let sent = try FormSnapshot(contentsOfCapture: URL(fileURLWithPath: capture))
        #expect(sent.differences(from: snapshot).filter { $0.location != "url" } == [], "\(type(of: transport))")
        #expect(sent.files.count == 1)
        return during.current
    }
}
