import FormDataKit
import FormDataKitTestSupport
import Foundation
import Testing

/// The origin rule on the wire: an origin on 127.0.0.1 that points the send at another host
/// (127.0.0.2) — by a resumable upload's `104` or `201` `Location`, or by a redirect — and that
/// other host recording everything it receives (Support/origin_pair_server.py). The request
/// carries every kind of credential: Basic credentials, a bearer `Authorization` of the caller,
/// a request cookie and a caller field marked sensitive.
@Suite("Origin rule on the wire")
struct OriginRuleWireTests {
    /// The two servers, and what each received once stopped.
    struct Pair {
        let process: PortAnnouncingProcess
        let statsFile: String

        static func start(_ mode: String) async throws -> Pair {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/origin_pair_server.py")
            let statsFile = NSTemporaryDirectory() + "origin-pair-\(UUID().uuidString).json"
            let process = try await PortAnnouncingProcess(arguments: ["python3", script.path, mode, statsFile]) { line in
                TestFailure("origin_pair_server.py did not start: \(line)")
            }
            return Pair(process: process, statsFile: statsFile)
        }

        var url: URL { URL(string: "http://127.0.0.1:\(process.ports[0])/upload")! }

        /// Stops both servers; the requests each received (`line`, `headers`, `bodyBytes`).
        func stop() async -> (origin: [[String: Any]], other: [[String: Any]]) {
            await process.stopAndWait()
            defer { try? FileManager.default.removeItem(atPath: statsFile) }
            let json =
                FileManager.default.contents(atPath: statsFile).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any]
            return (json?["origin"] as? [[String: Any]] ?? [], json?["other"] as? [[String: Any]] ?? [])
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// A 1 MiB upload to `url` carrying every credential, over `transport`.
    static func request(to url: URL, over transport: any FormDataTransport, resumable: Bool) -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.transport = transport
        request.addPostValue("holiday", forKey: "album")
        request.addData(
            Data(repeating: 0x61, count: 1 << 20), withFileName: "video.mov", andContentType: "video/quicktime", forKey: "video")
        request.username = "user"
        request.password = "basic-secret"
        request.addRequestHeader("X-Secret", value: "api-key-secret")
        request.sensitiveRequestHeaders = ["x-secret"]
        request.addRequestCookie(name: "session", value: "cookie-secret")
        request.shouldResumeInterruptedUploads = resumable
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        return request
    }

    /// Whether any received request carried a secret of ``request(to:over:resumable:)``.
    static func carriesSecrets(_ received: [[String: Any]]) -> Bool {
        received.contains { request in
            let headers = request["headers"] as? [String: String] ?? [:]
            return headers["authorization"] != nil || headers["cookie"] != nil || headers["x-secret"] != nil
        }
    }

    @Test("a 104 naming another host: nothing goes there; the interrupted upload fails as an ordinary one (curl)")
    func foreign104() async throws {
        let pair = try await Pair.start("104")
        let request = Self.request(to: pair.url, over: CurlTransport(), resumable: true)
        var failure: FormDataError?
        do throws(FormDataError) { _ = try await request.start() } catch { failure = error }
        let (origin, other) = await pair.stop()
        #expect(other.isEmpty, "the other host received \(other)")
        #expect(origin.count == 1 && Self.carriesSecrets(origin), "\(origin)")
        guard case .connectionFailure? = failure else {
            Issue.record("expected the interruption's connection failure, got \(String(describing: failure))")
            return
        }
        #expect(request.uploadResumptionURL == nil && request.uploadResumeCount == 0)
    }

    /// The transports that create a resumable upload before its content (they cannot report a `104`).
    static var creatingTransports: [StreamingTransportKind] { StreamingTransportKind.allCases.filter { $0 == .asyncHTTPClient } }

    @Test(
        "a 201 naming another host: nothing goes there; the body goes to the origin as an ordinary upload",
        .enabled(if: !creatingTransports.isEmpty, "needs a transport that creates uploads first: swift test --traits AsyncHTTPClient"),
        arguments: creatingTransports)
    func foreign201(kind: StreamingTransportKind) async throws {
        let pair = try await Pair.start("201")
        let made = try TransportTestSupport.newAsyncHTTPClientIfBuilt()
        let request = Self.request(to: pair.url, over: made.transport, resumable: true)
        let response = try await request.start()
        try await made.shutdown()
        let (origin, other) = await pair.stop()
        #expect(other.isEmpty, "the other host received \(other)")
        #expect(response.statusCode == 200 && String(decoding: response.body, as: UTF8.self) == "origin")
        let lines = origin.map { $0["line"] as? String ?? "" }
        #expect(lines.count == 3 && lines[0].hasPrefix("OPTIONS ") && lines[2].hasPrefix("POST "), "\(lines)")
        #expect((origin.last?["bodyBytes"] as? Int ?? 0) == Int(request.postLength), "\(origin)")
    }

    @Test("a redirect to another host carries no credential, cookie or sensitive field", arguments: TransportKind.allCases)
    func foreignRedirect(kind: TransportKind) async throws {
        let pair = try await Pair.start("redirect")
        let request = Self.request(to: pair.url, over: kind.transport, resumable: false)
        let response = try await request.start()
        let (origin, other) = await pair.stop()
        #expect(response.statusCode == 200 && String(decoding: response.body, as: UTF8.self) == "other")
        #expect(Self.carriesSecrets(origin), "the origin should have had them: \(origin)")
        #expect(other.count == 1 && !Self.carriesSecrets(other), "\(other)")
    }
}

extension TransportTestSupport {
    /// A new AsyncHTTPClient transport and its shutdown when this build has one; throws otherwise.
    static func newAsyncHTTPClientIfBuilt() throws -> (transport: any FormDataTransport, shutdown: @Sendable () async throws -> Void) {
        #if AsyncHTTPClient
        return try newAsyncHTTPClient()
        #else
        throw OriginRuleWireTests.TestFailure("AsyncHTTPClient is not in this build")
        #endif
    }
}
