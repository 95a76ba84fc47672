#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import FormDataKitTestSupport
import Testing

/// A real Apache httpd with `mod_http2` (event MPM) on 127.0.0.1 and a free port, run as a child
/// from a generated configuration: h2 over TLS, h2c over cleartext, or HTTP/1.1 only.
///
/// | Route   | Answer (one shell CGI, `text/plain`)                                                |
/// |---------|-------------------------------------------------------------------------------------|
/// | `/sha`  | `<SERVER_PROTOCOL> <CONTENT_LENGTH> <sha256 of the body>`                            |
/// | `/hold` | as `/sha`, after creating `held-<query>` and waiting for `release` in the directory  |
/// | `/moved`| `307` to `/sha`, after reading the whole body (a CGI)                                 |
/// | `/early`| `307` to `/sha` at once, the body unread (mod_alias's `Redirect`)                     |
///
/// The access log has one line per request, `<client port> <protocol> <status> <method> <path>`:
/// the distinct client ports are the connections the client used.
final class H2ApacheServer: Sendable {
    /// What the server speaks.
    enum Mode: Sendable {
        /// TLS with ALPN `h2` and `http/1.1`.
        case h2
        /// Cleartext: HTTP/1.1 and h2c (prior knowledge).
        case h2c
        /// TLS, HTTP/1.1 only.
        case http1TLS
        /// Cleartext, HTTP/1.1 only.
        case http1

        var usesTLS: Bool { self == .h2 || self == .http1TLS }
        var protocols: String {
            switch self {
            case .h2: return "h2 http/1.1"
            case .h2c: return "h2c http/1.1"
            case .http1TLS, .http1: return "http/1.1"
            }
        }
    }

    /// One line of the access log.
    struct Logged: Sendable, Equatable {
        var clientPort: Int
        var protocolName: String
        var status: Int
        var method: String
        var path: String
    }

    let port: Int
    let mode: Mode
    let directory: String
    /// The server's certificate (PEM) when it speaks TLS, to trust.
    let certificate: Data?
    /// Its file.
    var certificatePath: String? { certificates?.selfSignedA.certificate }
    private let certificates: TestCertificates?
    private let process: SpawnedProcess

    private init(port: Int, mode: Mode, directory: String, certificates: TestCertificates?, process: SpawnedProcess) throws {
        self.port = port
        self.mode = mode
        self.directory = directory
        self.certificates = certificates
        self.certificate = try certificates.map { try Data(contentsOf: URL(fileURLWithPath: $0.selfSignedA.certificate)) }
        self.process = process
    }

    /// `http(s)://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "\(mode.usesTLS ? "https" : "http")://127.0.0.1:\(port)\(path)")!
    }

    /// The access log's lines so far.
    var log: [Logged] {
        let text = (try? String(contentsOfFile: "\(directory)/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 5, let port = Int(parts[0]), let status = Int(parts[2]) else { return nil }
            return Logged(
                clientPort: port, protocolName: String(parts[1]), status: status, method: String(parts[3]), path: String(parts[4]))
        }
    }

    /// The access log once it has at least `count` lines of `method` (all methods when nil) to
    /// `path` (any when nil): Apache writes a request's line after its answer went out, so a
    /// client can hold the answer before the line is there. Waits (suspending) up to a minute.
    func log(atLeast count: Int, method: String? = "POST", path: String? = "/sha") async -> [Logged] {
        func matching() -> [Logged] { log.filter { (method == nil || $0.method == method) && (path == nil || $0.path == path) } }
        for _ in 0..<3000 {
            let lines = matching()
            if lines.count >= count { return lines }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        return matching()
    }

    /// Apache's error log, for failure messages.
    var errorLog: String { (try? String(contentsOfFile: "\(directory)/error.log", encoding: .utf8)) ?? "" }

    /// Whether the `/hold?<tag>` request has reached the script.
    func isHeld(_ tag: String) -> Bool { FileManager.default.fileExists(atPath: "\(directory)/held-\(tag)") }

    /// Lets every `/hold` request answer.
    func release() { _ = FileManager.default.createFile(atPath: "\(directory)/release", contents: Data()) }

    /// Stops the server and removes its directory (and certificates).
    func stop() async {
        release()
        process.signal(SIGTERM)
        _ = await process.wait()
        try? FileManager.default.removeItem(atPath: directory)
        certificates?.remove()
    }

    /// Runs `body` with a fresh server in `mode`, stopped afterwards whatever `body` does.
    static func withServer<T>(_ mode: Mode, _ body: (H2ApacheServer) async throws -> T) async throws -> T {
        let server = try await start(mode)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Why the server cannot run here, or nil.
    static var missing: String? {
        let needed =
            [RealServers.apacheBinary]
            + ["mod_mpm_event.so", "mod_http2.so", "mod_cgid.so", "mod_ssl.so"].map { "\(RealServers.apacheModules)/\($0)" }
        let missing = needed.filter { !FileManager.default.fileExists(atPath: $0) }
        return missing.isEmpty
            ? nil : "Apache with mod_http2 is not installed (missing \(missing.joined(separator: ", "))): apt-get install apache2"
    }

    private static func start(_ mode: Mode) async throws -> H2ApacheServer {
        if let missing { throw RealServers.Failure(description: missing) }
        let certificates = mode.usesTLS ? try await TestCertificates.make() : nil
        do {
            let (port, directory, process) = try await RealServers.startOnFreePort(
                RealServers.Launch(
                    name: "apache2 (mod_http2)", scratchPrefix: "fdk-h2apache-", pidFileName: "httpd.pid", logName: "error.log",
                    portTakenMarkers: ["Address already in use", "could not bind"],
                    prepare: { directory, port in try writeTree(in: directory, port: port, mode: mode, certificates: certificates) },
                    spawn: { directory in
                        // NO_DETACH: a process group of its own (see ApacheServer).
                        try SpawnedProcess(
                            RealServers.apacheBinary, ["-DNO_DETACH", "-f", "\(directory)/httpd.conf"],
                            stdin: .null, stdout: .null, stderr: .pipe)
                    }))
            return try H2ApacheServer(port: port, mode: mode, directory: directory, certificates: certificates, process: process)
        } catch {
            certificates?.remove()
            throw error
        }
    }

    private static func writeTree(in directory: String, port: Int, mode: Mode, certificates: TestCertificates?) throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: "\(directory)/cgi-bin", withIntermediateDirectories: true)
        let answer = #"printf 'Content-Type: text/plain\r\n\r\n%s %s %s\n' "$SERVER_PROTOCOL" "${CONTENT_LENGTH:-0}" "$sum""#
        let sha = "#!/bin/sh\nsum=$(sha256sum | cut -c1-64)\n\(answer)\n"
        let hold = """
            #!/bin/sh
            sum=$(sha256sum | cut -c1-64)
            : > "\(directory)/held-$QUERY_STRING"
            while [ ! -e "\(directory)/release" ]; do sleep 0.02; done
            \(answer)

            """
        let moved =
            "#!/bin/sh\ncat > /dev/null\nprintf 'Status: 307\\r\\nLocation: %s://%s/sha\\r\\n\\r\\n' \"$REQUEST_SCHEME\" \"$HTTP_HOST\"\n"
        try sha.write(toFile: "\(directory)/cgi-bin/sha.sh", atomically: false, encoding: .utf8)
        try moved.write(toFile: "\(directory)/cgi-bin/moved.sh", atomically: false, encoding: .utf8)
        try hold.write(toFile: "\(directory)/cgi-bin/hold.sh", atomically: false, encoding: .utf8)
        var lines = [
            "ServerRoot \"\(directory)\"",
            "ServerName 127.0.0.1",
            "Listen 127.0.0.1:\(port)",
            "PidFile \"\(directory)/httpd.pid\"",
            "ErrorLog \"\(directory)/error.log\"",
            "LogLevel warn",
            "DefaultRuntimeDir \"\(directory)\"",
            "Mutex file:\(directory) default",
        ]
        if RealServers.runningAsRoot {
            let worker = try RealServers.WorkerAccount.first(of: [("www-data", "www-data"), ("nobody", "nogroup"), ("nobody", "nobody")])
            lines += ["User \(worker.user)", "Group \(worker.group)"]
        }
        var modules = [
            ("mpm_event_module", "mod_mpm_event.so"), ("unixd_module", "mod_unixd.so"), ("authz_core_module", "mod_authz_core.so"),
            ("cgid_module", "mod_cgid.so"), ("alias_module", "mod_alias.so"), ("log_config_module", "mod_log_config.so"),
            ("http2_module", "mod_http2.so"),
        ]
        if mode.usesTLS { modules += [("socache_shmcb_module", "mod_socache_shmcb.so"), ("ssl_module", "mod_ssl.so")] }
        for (name, file) in modules {
            lines += ["<IfModule !\(name)>", "  LoadModule \(name) \"\(RealServers.apacheModules)/\(file)\"", "</IfModule>"]
        }
        lines += [
            // Small: the suites start several servers while the rest of the tests run on two cores.
            "StartServers 1", "ServerLimit 1", "ThreadsPerChild 16", "MaxRequestWorkers 16",
            "H2MinWorkers 1", "H2MaxWorkers 16", "H2MaxSessionStreams 128",
            "Timeout 60", "KeepAlive On", "LimitRequestBody 0",
            "Protocols \(mode.protocols)",
            "LogFormat \"%{remote}p %H %>s %m %U\" connections",
            "CustomLog \"\(directory)/access.log\" connections",
            "ScriptSock \"\(directory)/cgid.sock\"",
            "DocumentRoot \"\(directory)/cgi-bin\"",
            "<Directory />", "  Require all denied", "  AllowOverride None", "  Options None", "</Directory>",
            "<Directory \"\(directory)/cgi-bin\">", "  Require all granted", "  Options +ExecCGI", "</Directory>",
            "ScriptAlias /sha \"\(directory)/cgi-bin/sha.sh\"",
            "ScriptAlias /hold \"\(directory)/cgi-bin/hold.sh\"",
            "ScriptAlias /moved \"\(directory)/cgi-bin/moved.sh\"",
            "Redirect 307 /early /sha",
        ]
        if let certificates {
            lines += [
                "SSLEngine on",
                "SSLCertificateFile \"\(certificates.selfSignedA.certificate)\"",
                "SSLCertificateKeyFile \"\(certificates.selfSignedA.key)\"",
            ]
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: "\(directory)/httpd.conf", atomically: false, encoding: .utf8)
        // The workers (another account when root) read everything, run the scripts, create the marker files.
        try fileManager.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
        for name in ["cgi-bin", "cgi-bin/sha.sh", "cgi-bin/hold.sh", "cgi-bin/moved.sh"] {
            try fileManager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(directory)/\(name)")
        }
        if let certificates {
            try fileManager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: certificates.directory)
            for file in [certificates.selfSignedA.certificate, certificates.selfSignedA.key] {
                try fileManager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            }
        }
    }
}

/// The HTTP/2 suites, one at a time (each nested in an extension): each starts Apache servers
/// that run up to 64 CGI processes at once, beside the rest of the tests on two cores.
@Suite(.serialized) enum HTTP2Suites {}
