import Foundation
import FormDataKit
import FormDataKitTestSupport
import FormDataKitTesting
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

/// Redirects, response limits, timeouts and header checks, for every transport this build has
/// (`TransportKind.allCases`).
@Suite("Every transport: redirects, limits, timeouts")
struct TransportMatrixTests {
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

    @Test(
        "307 to another host: the body is sent again whole, Authorization stays behind (the driver re-sends: URLSession on Linux too)",
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
        let response = try await request.start()
        let upload = try JSONDecoder().decode(EdgeUpload.self, from: response.body)
        #expect(upload.method == "POST")
        #expect(upload.host == "127.0.0.2:\(server.server.ports[1])")
        #expect(upload.received == Int(request.postLength))
        #expect(upload.sha256 == expected)
        #expect(upload.authorization == nil)
        #expect(request.responseURL == target)
    }

    @Test(
        "301, 302 and 303 become a GET without a body; credentials stay behind",
        arguments: TransportKind.allCases, [301, 302, 303])
    func redirectToGet(kind: TransportKind, code: Int) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(
            server.redirect(1, code: code, to: server.url(2, "/upload")), file: nil,
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

    @Test(
        "a header with CR/LF handed straight to a transport is refused before anything goes out",
        arguments: TransportKind.allCases)
    func headerInjectionRefusedByTransport(kind: TransportKind) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let sent = TransportRequest(
            url: server.url(1, "/upload"), method: "POST",
            headers: [(name: "X-Evil", value: "a\r\nInjected: 1")],
            body: .data(Data("x=1".utf8)), timeoutInterval: Support.patientTimeout)
        let result = await drive(sent, on: kind.transport)
        #expect(result == .failure(.invalidRequestHeader(name: "X-Evil", value: "a\r\nInjected: 1")))
        #expect(try server.log(1).isEmpty)
    }

    @Test(
        "a raw (unencoded) response body past maximumResponseSize fails with responseTooLarge on every transport",
        arguments: TransportKind.allCases)
    func rawResponseLimitEveryTransport(kind: TransportKind) async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let request = try Self.formRequest(server.url(1, "/big/3000000"), file: nil, transport: kind.transport)
        request.maximumResponseSize = 1_000_000
        await #expect(throws: FormDataError.responseTooLarge(limit: 1_000_000)) { try await request.start() }
    }

    @Test(
        "an infinite or huge timeOutSeconds means no timeout (no trap converting it)", arguments: TransportKind.allCases,
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
}
