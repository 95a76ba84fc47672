import Foundation
import FormDataKitTestSupport
import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Testing

/// ASIHTTPRequest's network features over the curl transport against real servers: Apache httpd
/// (Digest and Basic realms, mod_deflate, a required client certificate) and tinyproxy (proxy
/// Basic auth). The servers run as children on free loopback ports (see ApacheServer,
/// TinyproxyServer); without the Debian packages these tests are skipped with a note, and in CI
/// (`FORMDATAKIT_REQUIRE_REAL_SERVERS=1`) a missing server fails them.
@Suite(
    "Network features against Apache httpd and tinyproxy (curl transport)",
    .enabled(
        if: RealServers.apacheMissing == nil || RealServers.required,
        "needs Apache: sudo apt-get install apache2 apache2-utils"))
struct RealServerNetworkTests {
    /// A request with ten fields and `file` as a file part, over a new curl transport.
    static func formRequest(_ url: URL, file: String) throws -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.transport = CurlTransport()
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        for index in 0..<10 { request.addPostValue("value \(index) é", forKey: "field\(index)") }
        try request.addFile(file, withFileName: "upload.bin", andContentType: "application/octet-stream", forKey: "file")
        return request
    }

    /// What report_cgi.py answered.
    static func report(_ request: FormDataRequest) throws -> ApacheServer.Report {
        try JSONDecoder().decode(ApacheServer.Report.self, from: request.responseData ?? Data())
    }

    /// The fields and the file the request carried, as the report lists them.
    static func expectWhole(_ report: ApacheServer.Report, file: Data) {
        #expect(report.fields == (0..<10).map { ["field\($0)", "value \($0) é"] })
        #expect(report.files.count == 1)
        #expect(report.files.first?.sha256 == SHA256.hex(file))
        #expect(report.files.first?.size == file.count)
    }

    @Test("Digest after pre-emptive Basic: the challenge is answered, the body arrives whole, the scheme is Digest")
    func digestAfterPreemptiveBasic() async throws {
        let file = try TransportTestSupport.makeFile(size: 3 << 20, seed: 21)
        defer { file.remove() }
        let content = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try await ApacheServer.withServer { server in
            let request = try Self.formRequest(server.url("/digest/upload"), file: file.path)
            request.username = ApacheServer.digest.user
            request.password = ApacheServer.digest.password
            let response = try await request.start()
            #expect(response.statusCode == 200, "\(server.errorLog)")
            let report = try Self.report(request)
            #expect(report.auth_type == "Digest")
            #expect(report.remote_user == ApacheServer.digest.user)
            Self.expectWhole(report, file: content)
            #expect(request.authenticationScheme == "Digest")
            #expect(request.authenticationRealm == ApacheServer.digest.realm)
            #expect(request.authenticationRetryCount == 1)

            // Not pre-emptive: the first request goes bare, the server's challenge picks Digest.
            let bare = try Self.formRequest(server.url("/digest/upload"), file: file.path)
            bare.username = ApacheServer.digest.user
            bare.password = ApacheServer.digest.password
            bare.shouldPresentCredentialsBeforeChallenge = false
            #expect(try await bare.start().statusCode == 200)
            Self.expectWhole(try Self.report(bare), file: content)
            #expect(bare.authenticationScheme == "Digest")

            // A wrong password: authenticationNeeded (ASI code 3) naming the scheme asked for.
            let wrong = try Self.formRequest(server.url("/digest/upload"), file: file.path)
            wrong.username = ApacheServer.digest.user
            wrong.password = "wrong"
            let failed = await TransportTestSupport.outcome(of: wrong)
            guard case .failure(.authenticationNeeded(let underlying)) = failed else {
                Issue.record("expected authenticationNeeded, got \(failed)")
                return
            }
            #expect(underlying.code == 401)
            #expect(underlying.message.contains("Digest"), "\(underlying)")
            #expect(wrong.error?.asiErrorCode == 3)
        }
    }

    @Test("Basic realm: credentials go with the first request, no challenge round")
    func basicPreemptive() async throws {
        let file = try TransportTestSupport.makeFile(size: 100_000, seed: 22)
        defer { file.remove() }
        try await ApacheServer.withServer { server in
            let request = try Self.formRequest(server.url("/basic/upload"), file: file.path)
            request.username = ApacheServer.basic.user
            request.password = ApacheServer.basic.password
            #expect(try await request.start().statusCode == 200)
            let report = try Self.report(request)
            #expect(report.auth_type == "Basic")
            #expect(request.authenticationScheme == "Basic")
            #expect(request.authenticationRetryCount == 0)
        }
    }

    @Test(
        "through tinyproxy with proxy credentials: fields and file arrive exactly, Via added; wrong credentials: authenticationNeeded",
        .enabled(if: RealServers.tinyproxyMissing == nil || RealServers.required, "needs tinyproxy: sudo apt-get install tinyproxy"))
    func throughTinyproxy() async throws {
        let file = try TransportTestSupport.makeFile(size: 2 << 20, seed: 23)
        defer { file.remove() }
        let content = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try await ApacheServer.withServer { server in
            try await TinyproxyServer.withServer(username: "proxyuser", password: "proxy-secret") { proxy in
                let request = try Self.formRequest(server.url("/open/upload"), file: file.path)
                request.proxyHost = "127.0.0.1"
                request.proxyPort = proxy.port
                request.proxyUsername = "proxyuser"
                request.proxyPassword = "proxy-secret"
                #expect(try await request.start().statusCode == 200)
                let report = try Self.report(request)
                Self.expectWhole(report, file: content)
                #expect(report.headers.keys.contains { $0.caseInsensitiveCompare("Via") == .orderedSame }, "\(report.headers)")

                // Without a body: tinyproxy answers 407 and closes at once, so a body still on its
                // way would meet a reset (curl 56, a connection failure) before the 407 is read.
                let wrong = FormDataRequest(url: server.url("/open/upload"))
                wrong.transport = CurlTransport()
                wrong.timeOutSeconds = TransportTestSupport.patientTimeout
                wrong.requestMethod = "GET"
                wrong.proxyHost = "127.0.0.1"
                wrong.proxyPort = proxy.port
                wrong.proxyUsername = "proxyuser"
                wrong.proxyPassword = "wrong"
                let failed = await TransportTestSupport.outcome(of: wrong)
                guard case .failure(.authenticationNeeded(let underlying)) = failed else {
                    Issue.record("expected authenticationNeeded from the proxy, got \(failed)")
                    return
                }
                // tinyproxy 1.11 answers a plain (non-CONNECT) request with wrong credentials
                // 401 + `WWW-Authenticate: Basic realm="Tinyproxy"`, not 407; either way it is
                // authenticationNeeded, and the message names the proxy's realm.
                #expect([401, 407].contains(underlying.code), "\(underlying)")
                #expect(underlying.message.contains("Tinyproxy"), "\(underlying)")
            }
        }
    }

    @Test("HTTPS requiring a client certificate: with it 200 and verified; without it a typed connection error")
    func clientCertificate() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let client = try await TestClientCertificate.make(issuedBy: certificates)
        let tls = ApacheServer.TLSSetup(
            certificate: certificates.issued.chain, key: certificates.issued.key,
            clientCA: certificates.certificateAuthority)
        let authority = try Data(contentsOf: URL(fileURLWithPath: certificates.certificateAuthority))
        try await ApacheServer.withServer(tls: tls) { server in
            let with = FormDataRequest(url: server.url("/open/tls"))
            with.transport = CurlTransport()
            with.timeOutSeconds = TransportTestSupport.patientTimeout
            with.setPostValue("1", forKey: "a")
            with.trustedCertificates = [authority]
            with.clientCertificate = .init(path: client.certificate, format: .pem, keyPath: client.key)
            #expect(try await with.start().statusCode == 200, "\(server.errorLog)")
            let report = try Self.report(with)
            #expect(report.ssl_client_verify == "SUCCESS")
            #expect(report.ssl_client_s_dn?.contains("CN=\(client.commonName)") == true)

            let without = FormDataRequest(url: server.url("/open/tls"))
            without.transport = CurlTransport()
            without.timeOutSeconds = TransportTestSupport.patientTimeout
            without.setPostValue("1", forKey: "a")
            without.trustedCertificates = [authority]
            let failed = await TransportTestSupport.outcome(of: without)
            guard case .failure(.connectionFailure) = failed else {
                Issue.record("expected a connection failure without a client certificate, got \(failed)")
                return
            }
        }
    }

    @Test("a gzip request body (≥ 8 MiB) through mod_deflate arrives as the original form")
    func gzipThroughModDeflate() async throws {
        let file = try TransportTestSupport.makeFile(size: 9 << 20, seed: 24)
        defer { file.remove() }
        let content = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try await ApacheServer.withServer { server in
            let request = try Self.formRequest(server.url("/inflate/upload"), file: file.path)
            request.shouldCompressRequestBody = true
            #expect(try await request.start().statusCode == 200, "\(server.errorLog)")
            let report = try Self.report(request)
            #expect(report.content_encoding?.lowercased() == "gzip")
            Self.expectWhole(report, file: content)
            #expect(report.body_bytes > 9 << 20)  // inflated by the server before the handler read it
        }
    }
}

/// The AFNetworking façade against the same servers: its gzip request bodies through mod_deflate.
@Suite(
    "FormDataKitAF against Apache httpd (curl transport)",
    .enabled(
        if: RealServers.apacheMissing == nil || RealServers.required,
        "needs Apache: sudo apt-get install apache2 apache2-utils"))
struct RealServerAFTests {
    @Test("AFHTTPSessionManager with shouldCompressRequestBody: a 9 MiB multipart body through mod_deflate arrives as the form")
    func gzipThroughModDeflate() async throws {
        let file = try TransportTestSupport.makeFile(size: 9 << 20, seed: 25)
        defer { file.remove() }
        let content = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try await ApacheServer.withServer { server in
            let manager = AFHTTPSessionManager(baseURL: server.url("/inflate/"), sessionConfiguration: nil, transport: CurlTransport())
            manager.requestSerializer.shouldCompressRequestBody = true
            let fileURL = URL(fileURLWithPath: file.path)
            // The JSON object goes back to bytes (Sendable) and is decoded as the report.
            let outcome: Result<Data, any Error> = await withCheckedContinuation { continuation in
                _ = manager.post(
                    "upload", parameters: ["a": "1", "b": "é"], headers: nil,
                    constructingBodyWith: { form in
                        try form.appendPart(
                            withFileURL: fileURL, name: "file", fileName: "upload.bin", mimeType: "application/octet-stream")
                    }, progress: nil,
                    success: { _, object in
                        continuation.resume(returning: Result { try JSONSerialization.data(withJSONObject: object ?? [:]) })
                    },
                    failure: { _, error in
                        continuation.resume(returning: .failure(error))
                    })
            }
            let report = try JSONDecoder().decode(ApacheServer.Report.self, from: try outcome.get())
            #expect(report.content_encoding?.lowercased() == "gzip", "\(server.errorLog)")
            #expect(report.fields.sorted { $0[0] < $1[0] } == [["a", "1"], ["b", "é"]])
            #expect(report.files.count == 1)
            #expect(report.files.first?.sha256 == SHA256.hex(content))
            #expect(report.files.first?.size == content.count)
        }
    }
}
