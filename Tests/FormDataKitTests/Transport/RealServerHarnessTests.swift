import Foundation
import FormDataKitTestSupport
import FormDataKitTesting
import Testing

/// Proves the real-server harness (``ApacheServer``, ``TinyproxyServer``, report_cgi.py) with an
/// independent client, `/usr/bin/curl`, before FormDataKit's transports are tested against it:
/// each route authenticates, inflates, reports and sets cookies as documented.
@Suite(
    "Real server harness",
    .enabled(
        if: (RealServers.apacheMissing == nil && RealServers.curlMissing == nil) || RealServers.required,
        "needs Apache and curl: sudo apt-get install apache2 apache2-utils curl"))
struct RealServerHarnessTests {
    // MARK: - Helpers

    /// A scratch directory for one test's files (removed by ``remove()``).
    struct Scratch {
        let directory: String

        private static let prefix = "fdk-harness-"
        /// Removes the scratch directories of test processes that died mid-test, once per process.
        private static let sweptStale: Bool = {
            RealServers.sweepStale(prefix: prefix, pidFileName: "no-server.pid")
            return true
        }()

        init() throws {
            _ = Self.sweptStale
            directory = NSTemporaryDirectory() + "\(Self.prefix)\(getpid())-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }

        /// Writes `data` to `name` in the directory and returns its path.
        func write(_ data: Data, name: String) throws -> String {
            let path = "\(directory)/\(name)"
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }

        /// A new path in the directory (for curl's outputs).
        func newPath(_ suffix: String) -> String { "\(directory)/\(UUID().uuidString)-\(suffix)" }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// One curl run: its exit status, the last response's status line and headers, the body.
    struct CurlExchange {
        /// curl's exit status (0: a response arrived, whatever its status).
        var exitCode: Int32
        /// The HTTP status of the last response (0 when none).
        var status: Int
        /// The last response's headers, in order.
        var headers: [(name: String, value: String)]
        var body: Data
        /// curl's error message, if any.
        var stderr: String

        /// The first value of header `name` (case-insensitive).
        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        /// The body as report_cgi.py's JSON.
        func report() throws -> ApacheServer.Report {
            try JSONDecoder().decode(ApacheServer.Report.self, from: body)
        }

        /// For failure messages.
        var summary: String {
            "curl exit \(exitCode), HTTP \(status), \(stderr.isEmpty ? "" : "stderr: \(stderr), ")body: \(String(decoding: body.prefix(2000), as: UTF8.self))"
        }
    }

    /// Runs `/usr/bin/curl` with `arguments` then `url` (suspending: ``SpawnedProcess`` waits on
    /// threads of its own) and collects the last response. `--max-time` only keeps a broken
    /// server from hanging the test; nothing is timed.
    static func curl(_ arguments: [String], _ url: URL, scratch: Scratch) async throws -> CurlExchange {
        if let missing = RealServers.curlMissing { throw RealServers.Failure(description: missing) }
        let bodyPath = scratch.newPath("body")
        let headersPath = scratch.newPath("headers")
        let result = try await SpawnedProcess.run(
            RealServers.curlBinary,
            ["-sS", "--max-time", "120", "-o", bodyPath, "-D", headersPath, "-w", "%{http_code}"]
                + arguments + [url.absoluteString])
        // -D writes every response (a 401 before the authenticated answer, a 100 Continue,
        // the proxy's CONNECT answer): the last block is the final response.
        let headerText = (try? String(contentsOfFile: headersPath, encoding: .isoLatin1)) ?? ""
        let blocks = headerText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
        let lines = blocks.last?.components(separatedBy: "\r\n") ?? []
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return CurlExchange(
            exitCode: result.status, status: Int(String(decoding: result.stdout, as: UTF8.self)) ?? 0,
            headers: headers, body: (try? Data(contentsOf: URL(fileURLWithPath: bodyPath))) ?? Data(),
            stderr: String(decoding: result.stderr, as: UTF8.self))
    }

    /// The hex SHA-256 of the file at `path`, by `sha256sum` (independent of FormDataKit).
    static func sha256(ofFile path: String) async throws -> String {
        let result = try await SpawnedProcess.run("/usr/bin/env", ["sha256sum", path])
        let hex = String(String(decoding: result.stdout, as: UTF8.self).prefix { $0.isHexDigit })
        guard result.termination.succeeded, hex.count == 64 else {
            throw RealServers.Failure(description: "sha256sum \(path): \(String(decoding: result.stderr, as: UTF8.self))")
        }
        return hex
    }

    /// `count` random bytes.
    static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            for index in buffer.indices { buffer[index] = generator.next() }
        }
        return data
    }

    // MARK: - Authentication

    @Test("/digest/: curl --digest with the right password gets a multipart form through; no credentials → 401 with a Digest challenge")
    func digestRoute() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = try scratch.write(Self.randomBytes(150_000), name: "photo.bin")
        let fileSHA = try await Self.sha256(ofFile: file)
        try await ApacheServer.withServer { server in
            let credentials = "\(ApacheServer.digest.user):\(ApacheServer.digest.password)"
            let accepted = try await Self.curl(
                ["--digest", "-u", credentials, "-F", "a=1", "-F", "f=@\(file)"],
                server.url("/digest/upload?x=y"), scratch: scratch)
            #expect(accepted.status == 200, "\(accepted.summary)\n\(server.errorLog)")
            let report = try accepted.report()
            #expect(report.method == "POST")
            #expect(report.path == "/digest/upload")
            #expect(report.path_info == "/upload")
            #expect(report.query == "x=y")
            #expect(report.auth_type == "Digest")
            #expect(report.remote_user == "alice")
            #expect(report.fields == [["a", "1"]])
            #expect(
                report.files == [
                    .init(name: "f", filename: "photo.bin", content_type: "application/octet-stream", size: 150_000, sha256: fileSHA)
                ])
            #expect(report.content_length == report.body_bytes)

            let refused = try await Self.curl(["-F", "a=1"], server.url("/digest/upload"), scratch: scratch)
            #expect(refused.status == 401, "\(refused.summary)")
            let challenge = try #require(refused.header("WWW-Authenticate"))
            #expect(challenge.hasPrefix("Digest "))
            #expect(challenge.contains("realm=\"digest-realm\""))
            #expect(challenge.contains("qop=\"auth\""))

            let wrong = try await Self.curl(["--digest", "-u", "alice:wrong"], server.url("/digest/upload"), scratch: scratch)
            #expect(wrong.status == 401, "\(wrong.summary)")
        }
    }

    @Test("/basic/: curl --basic with the right password gets a urlencoded form through; a wrong password → 401 with a Basic challenge")
    func basicRoute() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try await ApacheServer.withServer { server in
            let credentials = "\(ApacheServer.basic.user):\(ApacheServer.basic.password)"
            let accepted = try await Self.curl(
                ["--basic", "-u", credentials, "-d", "a=1&b=two+words&b=%C3%A9"],
                server.url("/basic/form"), scratch: scratch)
            #expect(accepted.status == 200, "\(accepted.summary)\n\(server.errorLog)")
            let report = try accepted.report()
            #expect(report.auth_type == "Basic")
            #expect(report.remote_user == "alice")
            #expect(report.content_type == "application/x-www-form-urlencoded")
            #expect(report.fields == [["a", "1"], ["b", "two words"], ["b", "é"]])
            #expect(report.headers["Authorization"] == nil)  // Apache keeps credentials from CGI scripts

            let refused = try await Self.curl(["--basic", "-u", "alice:wrong"], server.url("/basic/form"), scratch: scratch)
            #expect(refused.status == 401, "\(refused.summary)")
            #expect(refused.header("WWW-Authenticate") == "Basic realm=\"basic-realm\"")

            let open = try await Self.curl([], server.url("/open/anything"), scratch: scratch)
            #expect(open.status == 200, "\(open.summary)")
            #expect(try open.report().auth_type == nil)
        }
    }

    // MARK: - Gzip request bodies

    @Test("/inflate/: a gzip-compressed multipart body of more than 8 MiB arrives inflated; /open/ leaves it compressed")
    func inflateRoute() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // 8 MiB of zeros inflates ~1000 times its compressed size: beyond mod_deflate's default
        // ratio limit (200), so this also proves the configuration raised it.
        let zeros = try scratch.write(Data(count: 8 << 20), name: "zeros.bin")
        let noise = try scratch.write(Self.randomBytes(256 << 10), name: "noise.bin")
        let boundary = "harness-boundary-7d1f"
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"greeting\"\r\n\r\nhello\r\n".utf8)
        for (name, path) in [("zeros", zeros), ("noise", noise)] {
            body.append(
                Data(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(name).bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                        .utf8))
            body.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        let plain = try scratch.write(body, name: "body")
        let gzip = try await SpawnedProcess.run("/usr/bin/env", ["gzip", "-k", "-f", plain])
        #expect(gzip.termination.succeeded, "\(String(decoding: gzip.stderr, as: UTF8.self))")
        let compressed = plain + ".gz"
        let compressedSize = try #require(try FileManager.default.attributesOfItem(atPath: compressed)[.size] as? Int)
        let (zerosSHA, noiseSHA, bodySHA, compressedSHA) = (
            try await Self.sha256(ofFile: zeros), try await Self.sha256(ofFile: noise),
            try await Self.sha256(ofFile: plain), try await Self.sha256(ofFile: compressed)
        )
        let arguments = [
            "--data-binary", "@\(compressed)", "-H", "Content-Encoding: gzip",
            "-H", "Content-Type: multipart/form-data; boundary=\(boundary)",
        ]

        try await ApacheServer.withServer { server in
            let inflated = try await Self.curl(arguments, server.url("/inflate/upload"), scratch: scratch)
            #expect(inflated.status == 200, "\(inflated.summary)\n\(server.errorLog)")
            let report = try inflated.report()
            #expect(report.content_encoding == "gzip")
            #expect(report.body_bytes == body.count)
            #expect(report.body_sha256 == bodySHA)
            // What Apache hands the script: the compressed length (or none, were it corrected).
            #expect(report.content_length == nil || report.content_length == compressedSize)
            #expect(report.fields == [["greeting", "hello"]])
            #expect(
                report.files == [
                    .init(name: "zeros", filename: "zeros.bin", content_type: "application/octet-stream", size: 8 << 20, sha256: zerosSHA),
                    .init(
                        name: "noise", filename: "noise.bin", content_type: "application/octet-stream", size: 256 << 10, sha256: noiseSHA),
                ])

            let untouched = try await Self.curl(arguments, server.url("/open/upload"), scratch: scratch)
            #expect(untouched.status == 200, "\(untouched.summary)")
            let raw = try untouched.report()
            #expect(raw.body_bytes == compressedSize)
            #expect(raw.body_sha256 == compressedSHA)
        }
    }

    // MARK: - Proxy

    @Test(
        "tinyproxy with BasicAuth forwards to Apache with a Via header; a wrong password is refused by the proxy",
        .enabled(if: RealServers.tinyproxyMissing == nil || RealServers.required, "needs tinyproxy: sudo apt-get install tinyproxy"))
    func proxyWithBasicAuth() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try await ApacheServer.withServer { server in
            try await TinyproxyServer.withServer(username: "proxyuser", password: "proxy-secret") { proxy in
                let proxied = try await Self.curl(
                    ["-x", proxy.proxyURL.absoluteString, "-U", "proxyuser:proxy-secret", "-F", "a=1"],
                    server.url("/open/proxied"), scratch: scratch)
                #expect(proxied.status == 200, "\(proxied.summary)\n\(proxy.log)")
                let report = try proxied.report()
                #expect(report.headers["Via"]?.contains("tinyproxy") == true, "\(report.headers)")
                #expect(report.headers["Proxy-Authorization"] == nil)  // the proxy's credentials stay with it
                #expect(report.fields == [["a", "1"]])

                let wrong = try await Self.curl(
                    ["-x", proxy.proxyURL.absoluteString, "-U", "proxyuser:wrong"],
                    server.url("/open/proxied"), scratch: scratch)
                // 407 by HTTP; tinyproxy ≤ 1.11.2 answers 401 (tinyproxy issue #532).
                #expect([401, 407].contains(wrong.status), "\(wrong.summary)")
                #expect(wrong.header("Server")?.hasPrefix("tinyproxy") == true, "the refusal comes from the proxy, not Apache")
                #expect((try? wrong.report()) == nil)

                let anonymous = try await Self.curl(["-x", proxy.proxyURL.absoluteString], server.url("/open/proxied"), scratch: scratch)
                #expect(anonymous.status == 407, "\(anonymous.summary)")
                #expect(anonymous.header("Proxy-Authenticate")?.hasPrefix("Basic") == true)
            }
        }
    }

    @Test(
        "tinyproxy tunnels HTTPS (CONNECT) to Apache on a loopback port",
        .enabled(if: RealServers.tinyproxyMissing == nil || RealServers.required, "needs tinyproxy: sudo apt-get install tinyproxy"))
    func proxyTunnel() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let tls = ApacheServer.TLSSetup(certificate: certificates.issued.chain, key: certificates.issued.key)
        try await ApacheServer.withServer(tls: tls) { server in
            try await TinyproxyServer.withServer(username: "proxyuser", password: "proxy-secret") { proxy in
                let tunnelled = try await Self.curl(
                    [
                        "-x", proxy.proxyURL.absoluteString, "-U", "proxyuser:proxy-secret",
                        "--cacert", certificates.certificateAuthority, "-F", "a=1",
                    ],
                    server.url("/open/tunnelled"), scratch: scratch)
                #expect(tunnelled.status == 200, "\(tunnelled.summary)\n\(proxy.log)\n\(server.errorLog)")
                #expect(try tunnelled.report().fields == [["a", "1"]])
            }
        }
    }

    // MARK: - TLS client certificates

    @Test("HTTPS requiring a client certificate: the CA's client certificate gets through; none, or a self-signed one, fails")
    func clientCertificates() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let client = try await TestClientCertificate.make(issuedBy: certificates)
        let stranger = try await TestClientCertificate.makeSelfSigned(in: certificates.directory)
        let tls = ApacheServer.TLSSetup(
            certificate: certificates.issued.chain, key: certificates.issued.key,
            clientCA: certificates.certificateAuthority)
        try await ApacheServer.withServer(tls: tls) { server in
            #expect(server.url("/open/x").scheme == "https")
            let trust = ["--cacert", certificates.certificateAuthority]
            let accepted = try await Self.curl(
                trust + ["--cert", client.certificate, "--key", client.key, "-F", "a=1"],
                server.url("/open/tls"), scratch: scratch)
            #expect(accepted.status == 200, "\(accepted.summary)\n\(server.errorLog)")
            let report = try accepted.report()
            #expect(report.ssl_client_verify == "SUCCESS")
            #expect(report.ssl_client_s_dn?.contains("CN=\(client.commonName)") == true, "\(report.ssl_client_s_dn ?? "nil")")
            #expect(report.fields == [["a", "1"]])

            // The combined file works as curl's one --cert argument too.
            let combined = try await Self.curl(trust + ["--cert", client.combined], server.url("/open/tls"), scratch: scratch)
            #expect(combined.status == 200, "\(combined.summary)")

            let without = try await Self.curl(trust, server.url("/open/tls"), scratch: scratch)
            #expect(without.exitCode != 0 && without.status == 0, "\(without.summary)")

            let untrusted = try await Self.curl(
                trust + ["--cert", stranger.certificate, "--key", stranger.key],
                server.url("/open/tls"), scratch: scratch)
            #expect(untrusted.exitCode != 0 && untrusted.status == 0, "\(untrusted.summary)")
        }
    }

    // MARK: - Cookies

    @Test("/cookie/: ?set=k=v answers Set-Cookie; the cookie comes back on the next request")
    func cookieRoute() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let jar = scratch.newPath("cookies.txt")
        try await ApacheServer.withServer { server in
            let setting = try await Self.curl(["-c", jar], server.url("/cookie/x?set=k=v"), scratch: scratch)
            #expect(setting.status == 200, "\(setting.summary)\n\(server.errorLog)")
            #expect(setting.header("Set-Cookie") == "k=v; Path=/")
            #expect(try setting.report().cookie == nil)

            let returning = try await Self.curl(["-b", jar], server.url("/cookie/y"), scratch: scratch)
            #expect(returning.status == 200, "\(returning.summary)")
            #expect(try returning.report().cookie == "k=v")
        }
    }
}
