import Foundation

/// Certificates made with the `openssl` command for HTTPS tests on loopback, in a scratch
/// directory removed by ``remove()``. Every server certificate names `IP:127.0.0.1`.
public struct TestCertificates: Sendable {
    /// The scratch directory holding the files.
    public let directory: String
    /// A self-signed server certificate (PEM) and its key.
    public let selfSignedA: (certificate: String, key: String)
    /// Another, unrelated self-signed server certificate (PEM) and its key.
    public let selfSignedB: (certificate: String, key: String)
    /// A private CA certificate (PEM).
    public let certificateAuthority: String
    /// A server certificate issued by ``certificateAuthority``, as a chain file (leaf then CA),
    /// the leaf alone, and its key.
    public let issued: (chain: String, leaf: String, key: String)

    /// Why making certificates failed.
    public struct Failure: Error, CustomStringConvertible {
        /// The command and its output.
        public var description: String
    }

    /// Makes the certificates (elliptic-curve keys, valid for two days) with `openssl`, run on a
    /// thread of its own (never holding one of the Swift concurrency pool's).
    public static func make() async throws -> TestCertificates {
        let result: Result<TestCertificates, any Error> = await SpawnedProcess.onOwnThread { Result { try makeBlocking() } }
        return try result.get()
    }

    private static func makeBlocking() throws -> TestCertificates {
        let directory = NSTemporaryDirectory() + "fdk-tls-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"]
            func selfSigned(_ name: String) throws -> (String, String) {
                let certificate = "\(directory)/\(name).pem"
                let key = "\(directory)/\(name).key"
                try run(
                    ["req", "-x509"] + ec + [
                        "-keyout", key, "-out", certificate, "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1",
                    ])
                return (certificate, key)
            }
            let a = try selfSigned("a")
            let b = try selfSigned("b")
            let ca = "\(directory)/ca.pem"
            let caKey = "\(directory)/ca.key"
            try run(
                ["req", "-x509"] + ec + [
                    "-keyout", caKey, "-out", ca, "-subj", "/CN=FormDataKit Test CA",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ])
            let leaf = "\(directory)/leaf.pem"
            let leafKey = "\(directory)/leaf.key"
            let csr = "\(directory)/leaf.csr"
            let extensions = "\(directory)/leaf.ext"
            try "subjectAltName=IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
            try run([
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", leafKey, "-out", csr, "-subj", "/CN=127.0.0.1",
            ])
            try run([
                "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "2",
                "-out", leaf, "-extfile", extensions,
            ])
            let chain = "\(directory)/chain.pem"
            let chainText = try String(contentsOfFile: leaf, encoding: .utf8) + String(contentsOfFile: ca, encoding: .utf8)
            try chainText.write(toFile: chain, atomically: true, encoding: .utf8)
            return TestCertificates(
                directory: directory, selfSignedA: a, selfSignedB: b, certificateAuthority: ca,
                issued: (chain, leaf, leafKey))
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// The DER bytes of the PEM certificate file at `path` (what AFNetworking pins).
    public static func der(ofPEM path: String) throws -> Data {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let data = Data(base64Encoded: body) else { throw Failure(description: "not PEM: \(path)") }
        return data
    }

    /// Removes the scratch directory.
    public func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Runs `openssl` with `arguments` (on the caller's thread, which must not be one of the
    /// Swift concurrency pool's: ``make()`` is meant for a thread of its own).
    private static func run(_ arguments: [String]) throws {
        let result = try SpawnedProcess.runBlocking("/usr/bin/env", ["openssl"] + arguments)
        guard result.termination.succeeded else {
            throw Failure(
                description:
                    "openssl \(arguments.joined(separator: " ")): \(String(decoding: result.stdout + result.stderr, as: UTF8.self))")
        }
    }
}

/// A tiny HTTPS server (Python's `http.server` wrapped with `ssl`) on 127.0.0.1 with a free
/// port, run as a child process. Every request is answered 200 with JSON
/// `{"method": …, "bytes": <body bytes read>, "content_length": …}`, except
/// `/redirect?to=<percent-encoded URL>`, answered 307 to that URL without reading the body.
/// Stopped by ``stop()``.
public final class HTTPSTestServer: Sendable {
    private let server: PortAnnouncingProcess
    /// The port it listens on.
    public var port: Int { server.ports[0] }

    private static let script = #"""
        import http.server, json, ssl, sys, threading
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def handle_any(self):
                if self.path.startswith("/redirect?to="):
                    import urllib.parse
                    self.send_response(307)
                    self.send_header("Location", urllib.parse.unquote(self.path[len("/redirect?to="):]))
                    self.send_header("Content-Length", "0")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    return
                length = int(self.headers.get("Content-Length") or 0)
                left, count = length, 0
                while left > 0:
                    chunk = self.rfile.read(min(left, 1 << 20))
                    if not chunk: break
                    left -= len(chunk); count += len(chunk)
                out = json.dumps({"method": self.command, "bytes": count,
                                  "content_length": self.headers.get("Content-Length")}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
            do_POST = do_GET = do_PUT = handle_any
            def log_message(self, *args): pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print("PORT %d" % server.server_address[1], flush=True)
        sys.stdin.read()
        """#

    /// Starts a server presenting `certificateChain` (PEM, leaf first) with `key`.
    /// Waits for the server's start on a thread of its own (not the Swift concurrency pool's).
    public init(certificateChain: String, key: String) async throws {
        server = try await PortAnnouncingProcess(arguments: ["python3", "-c", Self.script, certificateChain, key]) { text in
            TestCertificates.Failure(description: "the HTTPS test server did not start: \(text)")
        }
    }

    /// `https://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL { URL(string: "https://127.0.0.1:\(port)\(path)")! }

    /// Stops the server (closing its standard input ends it) and waits for it to exit.
    public func stop() { server.stop() }
}
