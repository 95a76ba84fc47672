import Foundation
import FormDataKit
import FormDataKitAsyncHTTPClient
import FormDataKitTesting
import ProcessIsolation
import Testing

/// Support/edge_server.py: one process listening on 127.0.0.1 and 127.0.0.2.
struct EdgeServer {
    let server: PythonServer

    init() async throws { server = try await PythonServer(script: "edge_server.py") }

    /// The URL of `path` on 127.0.0.`host` (1 or 2).
    func url(_ host: Int, _ path: String) -> URL {
        URL(string: "http://127.0.0.\(host):\(server.ports[host - 1])\(path)")!
    }

    /// `/redirect/<code>` on 127.0.0.`host`, pointing at `target`.
    func redirect(_ host: Int, code: Int, to target: URL) -> URL {
        let escaped = target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return url(host, "/redirect/\(code)?to=\(escaped)")
    }

    /// Every request 127.0.0.`host` saw (the process logs both; the Host header tells them apart).
    func log(_ host: Int) throws -> [EdgeLogEntry] {
        try JSONDecoder().decode([EdgeLogEntry].self, from: Data(contentsOf: url(host, "/log")))
            .filter { $0.host == "127.0.0.\(host):\(server.ports[host - 1])" }
    }

    func stop() { server.stop() }
}

/// What edge_server.py's `/upload` answers.
struct EdgeUpload: Decodable {
    var method: String
    var host: String?
    var content_length: Int
    var received: Int
    var sha256: String
    var authorization: String?
    var cookie: String?
    var expect: String?
    var transfer_encoding: String?
    var content_type: String?
}

/// One entry of edge_server.py's `/log`.
struct EdgeLogEntry: Decodable {
    var path: String
    var host: String?
    var received: Int
    var authorization: String?
}

@Suite("Curl transport: streaming, redirects, limits, many sends at once")
struct CurlTransportTests {
    typealias Support = TransportTestSupport

    /// A form of two fields and `file`, sent through `transport`.
    static func formRequest(_ url: URL, file: String?, transport: any FormDataTransport) throws -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.transport = transport
        request.timeOutSeconds = Support.patientTimeout
        request.setPostValue("Grüße ✓", forKey: "greeting")
        request.setPostValue("42", forKey: "answer")
        if let file { try request.addFile(file, forKey: "file") }
        return request
    }

    /// A sparse file of `size` zero bytes (made at once, whatever the size).
    static func sparseFile(size: Int) throws -> ScratchFile {
        let file = try Support.makeFile(size: 0, name: "sparse.bin")
        guard truncate(file.path, off_t(size)) == 0 else { throw Support.Failure(description: "truncate failed") }
        return file
    }

    @Test("a body streams with its exact Content-Length: no chunking, no Expect, no temporary file")
    func exactLengthNoSpool() async throws {
        let file = try Support.makeFile(size: 3_000_000, seed: 71)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/upload"), file: file.path, transport: CurlTransport.shared)
        try request.buildPostBody()
        #expect(!request.isPostBodySpooled)
        #expect(request.compressedPostBodyFilePath == nil)
        let expected = SHA256.hex(try #require(request.bodySource).readAll())
        let response = try await request.start()
        let upload = try JSONDecoder().decode(EdgeUpload.self, from: response.body)
        #expect(upload.content_length == Int(request.postLength))
        #expect(upload.received == upload.content_length)
        #expect(upload.sha256 == expected)
        #expect(upload.expect == nil)
        #expect(upload.transfer_encoding == nil)
        #expect(upload.content_type?.hasPrefix("multipart/form-data; charset=utf-8; boundary=") == true)
        #expect(request.uploadProgress.fractionCompleted == 1.0)
        #expect(request.totalBytesSent == request.postLength)
    }

    @Test("307 to another host: the body is sent again whole, Authorization stays behind (URLSession on Linux: refused clearly)",
          arguments: TransportKind.allCases)
    func redirect307AcrossOrigins(kind: TransportKind) async throws {
        let file = try Support.makeFile(size: 2_000_000, seed: 72)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let target = server.url(2, "/upload")
        let request = try Self.formRequest(server.redirect(1, code: 307, to: target), file: file.path, transport: kind.transport)
        request.username = "alice"
        request.password = "secret"
        try request.buildPostBody()
        let expected = SHA256.hex(try #require(request.bodySource).readAll())
        // The first host got the credentials (sent pre-emptively, as ASIHTTPRequest did).
        defer { #expect((try? server.log(1).first?.authorization) == "Basic YWxpY2U6c2VjcmV0") }
        #if canImport(FoundationNetworking)
        if kind == .urlSession {
            // FoundationNetworking would follow without the body: the send fails instead, naming both URLs.
            await #expect(throws: FormDataError.self) { try await request.start() }
            guard case .redirectRefused(_, let to, _)? = request.error else {
                Issue.record("expected redirectRefused, got \(String(describing: request.error))")
                return
            }
            #expect(to == target.absoluteString)
            let atTarget = try server.log(2)
            #expect(atTarget.isEmpty, "\(atTarget.map { "\($0.path) \($0.received) \($0.authorization ?? "-")" })")
            return
        }
        #endif
        let response = try await request.start()
        let upload = try JSONDecoder().decode(EdgeUpload.self, from: response.body)
        #expect(upload.method == "POST")
        #expect(upload.host == "127.0.0.2:\(server.server.ports[1])")
        #expect(upload.received == Int(request.postLength))
        #expect(upload.sha256 == expected)
        #expect(upload.authorization == nil)
        #expect(request.responseURL == target)
    }

    @Test("308 on the same origin keeps method, body and Authorization")
    func redirect308SameOrigin() async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.redirect(1, code: 308, to: server.url(1, "/upload")), file: nil,
                                           transport: CurlTransport.shared)
        request.requestMethod = "PUT"
        request.username = "alice"
        request.password = "secret"
        let response = try await request.start()
        let upload = try JSONDecoder().decode(EdgeUpload.self, from: response.body)
        #expect(upload.method == "PUT")
        #expect(upload.received == Int(request.postLength))
        #expect(upload.received > 0)
        #expect(upload.authorization == "Basic YWxpY2U6c2VjcmV0")
    }

    @Test("301, 302 and 303 become a GET without a body; credentials stay behind",
          arguments: TransportKind.allCases, [301, 302, 303])
    func redirectToGet(kind: TransportKind, code: Int) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.redirect(1, code: code, to: server.url(2, "/upload")), file: nil,
                                           transport: kind.transport)
        request.username = "alice"
        request.password = "secret"
        let response = try await request.start()
        let upload = try JSONDecoder().decode(EdgeUpload.self, from: response.body)
        #expect(upload.method == "GET")
        #expect(upload.received == 0)
        #expect(upload.content_type == nil)
        #expect(upload.authorization == nil)
    }

    @Test("a redirect loop ends after five redirects with tooMuchRedirection (ASI code 9)", arguments: TransportKind.allCases)
    func tooManyRedirects(kind: TransportKind) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        // Each hop points at itself.
        let request = FormDataRequest(url: server.url(1, "/loop"))
        request.transport = kind.transport
        request.requestMethod = "GET"
        request.timeOutSeconds = Support.patientTimeout
        await #expect(throws: FormDataError.self) { try await request.start() }
        guard case .tooMuchRedirection? = request.error else {
            Issue.record("expected tooMuchRedirection, got \(String(describing: request.error))")
            return
        }
        #expect(request.error?.asiErrorCode == 9)
        // The first request and five redirects.
        #expect(try server.log(1).count == 6)
    }

    @Test("a header with CR/LF handed straight to a transport is refused before anything goes out",
          arguments: TransportKind.allCases)
    func headerInjectionRefusedByTransport(kind: TransportKind) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let sent = TransportRequest(url: server.url(1, "/upload"), method: "POST",
                                    headers: [(name: "X-Evil", value: "a\r\nInjected: 1")],
                                    body: .data(Data("x=1".utf8)), timeoutInterval: Support.patientTimeout)
        let result: Result<FormDataResponse, FormDataError> = await withCheckedContinuation { continuation in
            _ = kind.transport.start(sent, observer: CompletionObserver { continuation.resume(returning: $0) })
        }
        #expect(result == .failure(.invalidRequestHeader(name: "X-Evil", value: "a\r\nInjected: 1")))
        #expect(try server.log(1).isEmpty)
    }

    @Test("the server's own reason phrase is ASI's responseStatusMessage")
    func reasonPhrase() async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/reason"), file: nil, transport: CurlTransport.shared)
        _ = try await request.start()
        #expect(request.responseStatusMessage == "HTTP/1.1 200 Everything Is Fine")
    }

    @Test("a response body past maximumResponseSize stops the transfer with responseTooLarge")
    func rawResponseLimit() async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/big/3000000"), file: nil, transport: CurlTransport.shared)
        request.maximumResponseSize = 1_000_000
        await #expect(throws: FormDataError.responseTooLarge(limit: 1_000_000)) { try await request.start() }
        let allowed = try Self.formRequest(server.url(1, "/big/3000000"), file: nil, transport: CurlTransport.shared)
        #expect(try await allowed.start().body.count == 3_000_000)
    }

    @Test("a raw (unencoded) response body past maximumResponseSize fails with responseTooLarge on every transport",
          arguments: TransportKind.allCases)
    func rawResponseLimitEveryTransport(kind: TransportKind) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/big/3000000"), file: nil, transport: kind.transport)
        request.maximumResponseSize = 1_000_000
        await #expect(throws: FormDataError.responseTooLarge(limit: 1_000_000)) { try await request.start() }
    }

    @Test("an infinite or huge timeOutSeconds means no timeout (no trap converting it)", arguments: TransportKind.allCases,
          [Double.infinity, 1e10])
    func hugeTimeouts(kind: TransportKind, timeout: Double) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/upload"), file: nil, transport: kind.transport)
        request.timeOutSeconds = timeout
        #expect(try await request.start().statusCode == 200)
    }

    @Test("a doubly gzipped response is inflated once: the body is the inner gzip", arguments: TransportKind.allCases)
    func doubleGzipInflatedOnce(kind: TransportKind) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/double-gzip"), file: nil, transport: kind.transport)
        let body = try await request.start().body
        #expect(body.prefix(2) == Data([0x1f, 0x8b]), "\(body.prefix(16) as NSData)")
        var inner = Data()
        let inflater = try GzipInflater(outputLimit: 1 << 20)
        try inflater.decompress(body) { (chunk) throws(FormDataError) in inner.append(contentsOf: chunk) }
        try inflater.finish()
        #expect(inner == Data(String(repeating: "payload ", count: 100).utf8))
    }

    @Test("a file that grows after the build fails with fileChanged; no complete wrong body arrives")
    func fileChangedWhileStreaming() async throws {
        let file = try Support.makeFile(size: 1_000_000, seed: 73)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/upload"), file: file.path, transport: CurlTransport.shared)
        try request.buildPostBody()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("grown".utf8))
        try handle.close()
        await #expect(throws: FormDataError.internalErrorWhileBuilding(underlying: .fileChanged(
            path: file.path, expectedSize: 1_000_000, actualSize: 1_000_005))) {
            try await request.start()
        }
        #expect(try server.log(1).allSatisfy { $0.received < Int(request.postLength) })
    }

    @Test("two threads call startSynchronous on one request: one sends, the other gets requestInProgress at once")
    func concurrentStartSynchronous() async throws {
        let file = try Self.sparseFile(size: 32 << 20)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        // The server never reads: the first send stays in flight until it is cancelled.
        let request = try Self.formRequest(server.url(1, "/stall"), file: file.path, transport: CurlTransport.shared)
        async let first = Support.blocking { request.startSynchronous() }
        let deadline = Date().addingTimeInterval(30)
        while request.totalBytesSent == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let second = await Support.blocking { request.startSynchronous() }
        #expect(second == .requestInProgress)
        #expect(request.error == nil)  // the send in flight is left alone
        request.cancel()
        #expect(await first == .cancelled)
        #expect(request.error == .cancelled)
    }

    @Test("with a streaming default transport, postBodyFilePath spools on first access (ASI code reads it)")
    func lazySpool() throws {
        let file = try Support.makeFile(size: 200_000, seed: 74)
        defer { file.remove() }
        let request = try Self.formRequest(URL(string: "http://127.0.0.1:9/x")!, file: file.path, transport: CurlTransport.shared)
        try request.buildPostBody()
        #expect(!request.isPostBodySpooled)
        let path = try #require(request.postBodyFilePath)
        #expect(request.isPostBodySpooled)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == (try #require(request.bodySource).readAll()))
        #expect(request.postBodyFilePath == path)
        request.setPostValue("changed", forKey: "answer")
        #expect(!Support.exists(path))
    }

    @Test("50 mid-body cancels and 50 early 413-and-close answers of a 64 MiB upload: typed outcomes, in-process, no file left")
    func cancelsAndEarlyAnswers() async throws {
        let file = try Self.sparseFile(size: 64 << 20)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let transport = CurlTransport()
        for _ in 0..<50 {
            let request = try Self.formRequest(server.url(1, "/upload?slow=1"), file: file.path, transport: transport)
            let canceller = RecordingDelegate(onSend: { $0.cancel() })  // the delegate is held weakly
            request.delegate = canceller
            await Support.blocking { request.startSynchronous() }
            #expect(request.error == .cancelled)
            #expect(canceller.log.last == "failed")
            #expect(!request.isPostBodySpooled)
        }
        for _ in 0..<50 {
            let request = try Self.formRequest(server.url(1, "/reject"), file: file.path, transport: transport)
            await Support.blocking { request.startSynchronous() }
            switch request.error {
            case nil: #expect(request.responseStatusCode == 413)
            case .connectionFailure?: break
            case let other?: Issue.record("unexpected error \(other)")
            }
            #expect(!request.isPostBodySpooled)
        }
        // (No process-wide temp-file check: other suites spool at the same time. The curl
        // transport makes no file; the requests above never spooled.)
    }
}

@Suite("No request waits for another: a stalled and a cancelled upload beside 20 small ones")
struct HeadOfLineTests {
    typealias Support = TransportTestSupport

    /// The streaming transports, each a fresh instance. (URLSession on Linux cannot pass: see
    /// the README's transport table.)
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case curl
        case asyncHTTPClient
        var testDescription: String { rawValue }
    }

    @Test("while one upload is stalled by its server and another is cancelled mid-body, 20 small uploads each finish in under 2 s",
          arguments: Kind.allCases)
    func smallUploadsAreNotHeldUp(kind: Kind) async throws {
        // AsyncHTTPClient sends run on the process's Swift concurrency pool (two threads here):
        // beside the other suites' work they waited 14-18 s for it, stalled upload or not. Its
        // case runs in a child process of its own, so it measures the transport; curl's sends
        // run on the transport's own thread and are measured here, under the whole suite's load.
        try await Isolation.run(case: kind.rawValue, isolate: kind == .asyncHTTPClient) {
        let big = try CurlTransportTests.sparseFile(size: 32 << 20)
        defer { big.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let ahc = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let transport: any FormDataTransport = ahc ?? CurlTransport()

        let stalled = try CurlTransportTests.formRequest(server.url(1, "/stall"), file: big.path, transport: transport)
        stalled.startAsynchronous()
        let cancelled = try CurlTransportTests.formRequest(server.url(1, "/upload?slow=1"), file: big.path, transport: transport)
        let canceller = RecordingDelegate(onSend: { $0.cancel() })  // the delegate is held weakly
        cancelled.delegate = canceller
        await Support.blocking { cancelled.startSynchronous() }
        #expect(cancelled.error == .cancelled)
        // The stalled upload has sent what the socket buffers take and is waiting.
        let deadline = Date().addingTimeInterval(30)
        while stalled.totalBytesSent == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(stalled.totalBytesSent > 0)

        let durations = try await withThrowingTaskGroup(of: Double.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let request = FormDataRequest(url: server.url(1, "/upload"))
                    request.transport = transport
                    request.timeOutSeconds = Support.patientTimeout
                    request.setPostValue("small \(index)", forKey: "n")
                    // Timed on a thread of its own, around the blocking send: the figure is the
                    // transport's, not the wait of this task for a concurrency-pool thread.
                    let (seconds, status) = await Support.blocking { () -> (Double, Int) in
                        let start = Date()
                        request.startSynchronous()
                        return (Date().timeIntervalSince(start), request.responseStatusCode)
                    }
                    #expect(status == 200, "\(String(describing: request.error))")
                    return seconds
                }
            }
            return try await group.reduce(into: [Double]()) { $0.append($1) }
        }
        #expect(durations.count == 20)
        #expect(durations.allSatisfy { $0 < 2 }, "durations: \(durations.sorted())")
        stalled.cancel()
        let stallDeadline = Date().addingTimeInterval(10)
        while stalled.error == nil && Date() < stallDeadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(stalled.error == .cancelled)
        try await ahc?.shutdown()
        }
    }
}

@Suite("Redirect rules (ASIHTTPRequest's, for the transports that follow redirects themselves)")
struct RedirectPolicyTests {
    let base = TransportRequest(
        url: URL(string: "https://a.example/form")!, method: "POST",
        headers: [(name: "Authorization", value: "Basic x"), (name: "Cookie", value: "c=1"),
                  (name: "Content-Type", value: "multipart/form-data; boundary=B"), (name: "X-Other", value: "kept")],
        body: .data(Data("body".utf8)), timeoutInterval: 10)

    @Test("https to http is refused, naming both URLs")
    func downgradeRefused() {
        let decision = RedirectPolicy().decide(after: base, statusCode: 307, location: URL(string: "http://a.example/form"),
                                               redirectsSoFar: 0)
        guard case .refuse(.redirectRefused(let from, let to, _)) = decision else {
            Issue.record("expected a refusal, got \(decision)")
            return
        }
        #expect(from == "https://a.example/form")
        #expect(to == "http://a.example/form")
    }

    @Test("another origin loses Authorization and Cookie; 307 keeps method and body")
    func crossOrigin307() {
        guard case .follow(let next) = RedirectPolicy().decide(
            after: base, statusCode: 307, location: URL(string: "https://b.example/x"), redirectsSoFar: 0)
        else { Issue.record("expected follow"); return }
        #expect(next.method == "POST")
        #expect(next.body == base.body)
        #expect(next.headers.map(\.name) == ["Content-Type", "X-Other"])
    }

    @Test("same origin keeps credentials; another port is another origin")
    func origins() {
        #expect(RedirectPolicy.sameOrigin(URL(string: "https://a.example/x")!, URL(string: "https://A.example:443/y")!))
        #expect(!RedirectPolicy.sameOrigin(URL(string: "http://a.example/x")!, URL(string: "http://a.example:8080/x")!))
        guard case .follow(let next) = RedirectPolicy().decide(
            after: base, statusCode: 308, location: URL(string: "https://a.example/other"), redirectsSoFar: 0)
        else { Issue.record("expected follow"); return }
        #expect(next.header("Authorization") == "Basic x")
    }

    @Test("303 drops the body and its headers; HEAD stays HEAD; the sixth redirect is refused")
    func getAndLimit() {
        guard case .follow(let next) = RedirectPolicy().decide(
            after: base, statusCode: 303, location: URL(string: "https://a.example/done"), redirectsSoFar: 0)
        else { Issue.record("expected follow"); return }
        #expect(next.method == "GET")
        #expect(next.body == .none)
        #expect(next.header("Content-Type") == nil)
        var head = base
        head.method = "HEAD"
        if case .follow(let nextHead) = RedirectPolicy().decide(
            after: head, statusCode: 302, location: URL(string: "https://a.example/done"), redirectsSoFar: 0) {
            #expect(nextHead.method == "HEAD")
        } else {
            Issue.record("expected follow")
        }
        guard case .refuse(.tooMuchRedirection) = RedirectPolicy().decide(
            after: base, statusCode: 302, location: URL(string: "https://a.example/again"), redirectsSoFar: 5)
        else { Issue.record("expected tooMuchRedirection"); return }
        #expect(RedirectPolicy().decide(after: base, statusCode: 200, location: nil, redirectsSoFar: 0) == .deliver)
    }
}
