import Foundation
import FormDataKit
import FormDataKitTesting
import FormDataKitTestSupport
import Testing

@Suite("Curl transport: streaming, redirects, limits, many sends at once")
struct CurlTransportTests {

    typealias Support = TransportTestSupport

    @Test("a body streams with its exact Content-Length: no chunking, no Expect, no temporary file")
    func exactLengthNoSpool() async throws {
        let file = try Support.makeFile(size: 3_000_000, seed: 71)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try TransportMatrixTests.formRequest(server.url(1, "/upload"), file: file.path, transport: CurlTransport.shared)
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

    @Test("308 on the same origin keeps method, body and Authorization")
    func redirect308SameOrigin() async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try TransportMatrixTests.formRequest(
            server.redirect(1, code: 308, to: server.url(1, "/upload")), file: nil,
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

    @Test("the server's own reason phrase is ASI's responseStatusMessage")
    func reasonPhrase() async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try TransportMatrixTests.formRequest(server.url(1, "/reason"), file: nil, transport: CurlTransport.shared)
        _ = try await request.start()
        #expect(request.responseStatusMessage == "HTTP/1.1 200 Everything Is Fine")
    }

    @Test("a response body past maximumResponseSize stops the transfer with responseTooLarge")
    func rawResponseLimit() async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try TransportMatrixTests.formRequest(server.url(1, "/big/3000000"), file: nil, transport: CurlTransport.shared)
        request.maximumResponseSize = 1_000_000
        await #expect(throws: FormDataError.responseTooLarge(limit: 1_000_000)) { try await request.start() }
        let allowed = try TransportMatrixTests.formRequest(server.url(1, "/big/3000000"), file: nil, transport: CurlTransport.shared)
        #expect(try await allowed.start().body.count == 3_000_000)
    }

    @Test("a file that grows after the build fails with fileChanged; no complete wrong body arrives")
    func fileChangedWhileStreaming() async throws {
        let file = try Support.makeFile(size: 1_000_000, seed: 73)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try TransportMatrixTests.formRequest(server.url(1, "/upload"), file: file.path, transport: CurlTransport.shared)
        try request.buildPostBody()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("grown".utf8))
        try handle.close()
        await #expect(
            throws: FormDataError.internalErrorWhileBuilding(
                underlying: .fileChanged(
                    path: file.path, expectedSize: 1_000_000, actualSize: 1_000_005))
        ) {
            try await request.start()
        }
        #expect(try server.log(1).allSatisfy { $0.received < Int(request.postLength) })
    }

    @Test("two threads call startSynchronous on one request: one sends, the other gets requestInProgress at once")
    func concurrentStartSynchronous() async throws {
        let file = try TransportMatrixTests.sparseFile(size: 32 << 20)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        // The server never reads: the first send stays in flight until it is cancelled.
        let request = try TransportMatrixTests.formRequest(server.url(1, "/stall"), file: file.path, transport: CurlTransport.shared)
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
        let request = try TransportMatrixTests.formRequest(
            URL(string: "http://127.0.0.1:9/x")!, file: file.path, transport: CurlTransport.shared)
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
        let file = try TransportMatrixTests.sparseFile(size: 64 << 20)
        defer { file.remove() }
        let server = try await EdgeServer()
        defer { server.stop() }
        let transport = CurlTransport()
        for _ in 0..<50 {
            // The server reads nothing: the cancel made on the first bytes sent lands mid-body
            // however late its callback runs (a server that read the body could finish first).
            let request = try TransportMatrixTests.formRequest(server.url(1, "/stall"), file: file.path, transport: transport)
            let canceller = RecordingDelegate(onSend: { $0.cancel() })  // the delegate is held weakly
            request.delegate = canceller
            await Support.blocking { request.startSynchronous() }
            #expect(request.error == .cancelled)
            #expect(canceller.log.last == "failed")
            #expect(!request.isPostBodySpooled)
        }
        for _ in 0..<50 {
            let request = try TransportMatrixTests.formRequest(server.url(1, "/reject"), file: file.path, transport: transport)
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

@Suite("Redirect rules (ASIHTTPRequest's, for the transports that follow redirects themselves)")
struct RedirectPolicyTests {
    let base = TransportRequest(
        url: URL(string: "https://a.example/form")!, method: "POST",
        headers: [
            (name: "Authorization", value: "Basic x"), (name: "Cookie", value: "c=1"),
            (name: "Content-Type", value: "multipart/form-data; boundary=B"), (name: "X-Other", value: "kept"),
        ],
        body: .data(Data("body".utf8)), timeoutInterval: 10)

    @Test("https to http is refused, naming both URLs")
    func downgradeRefused() {
        let decision = RedirectPolicy().decide(
            after: base, statusCode: 307, location: URL(string: "http://a.example/form"),
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
        guard
            case .follow(let next) = RedirectPolicy().decide(
                after: base, statusCode: 307, location: URL(string: "https://b.example/x"), redirectsSoFar: 0)
        else {
            Issue.record("expected follow")
            return
        }
        #expect(next.method == "POST")
        #expect(next.body == base.body)
        #expect(next.headers.map(\.name) == ["Content-Type", "X-Other"])
    }

    @Test("same origin keeps credentials; another port is another origin")
    func origins() {
        #expect(OriginRule.sameOrigin(URL(string: "https://a.example/x")!, URL(string: "https://A.example:443/y")!))
        #expect(!OriginRule.sameOrigin(URL(string: "http://a.example/x")!, URL(string: "http://a.example:8080/x")!))
        guard
            case .follow(let next) = RedirectPolicy().decide(
                after: base, statusCode: 308, location: URL(string: "https://a.example/other"), redirectsSoFar: 0)
        else {
            Issue.record("expected follow")
            return
        }
        #expect(next.header("Authorization") == "Basic x")
    }

    @Test("303 drops the body and its headers; HEAD stays HEAD; the sixth redirect is refused")
    func getAndLimit() {
        guard
            case .follow(let next) = RedirectPolicy().decide(
                after: base, statusCode: 303, location: URL(string: "https://a.example/done"), redirectsSoFar: 0)
        else {
            Issue.record("expected follow")
            return
        }
        #expect(next.method == "GET")
        #expect(next.body == .none)
        #expect(next.header("Content-Type") == nil)
        var head = base
        head.method = "HEAD"
        if case .follow(let nextHead) = RedirectPolicy().decide(
            after: head, statusCode: 302, location: URL(string: "https://a.example/done"), redirectsSoFar: 0)
        {
            #expect(nextHead.method == "HEAD")
        } else {
            Issue.record("expected follow")
        }
        guard
            case .refuse(.tooMuchRedirection) = RedirectPolicy().decide(
                after: base, statusCode: 302, location: URL(string: "https://a.example/again"), redirectsSoFar: 5)
        else {
            Issue.record("expected tooMuchRedirection")
            return
        }
        #expect(RedirectPolicy().decide(after: base, statusCode: 200, location: nil, redirectsSoFar: 0) == .deliver)
    }
}
