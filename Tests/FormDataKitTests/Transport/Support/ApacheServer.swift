#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting

/// A real Apache httpd (Debian's `apache2`) on 127.0.0.1 and a free port, run as a child process
/// from a configuration generated in a scratch directory of its own — never as a system service.
///
/// Every route is answered by one CGI script, `report_cgi.py` (in this folder), which reports
/// what arrived as JSON (``Report``):
///
/// | Route          | What Apache does before the script runs                                         |
/// |----------------|----------------------------------------------------------------------------------|
/// | `/open/…`      | nothing                                                                          |
/// | `/basic/…`     | Basic authentication, realm `basic-realm`, `alice` / `basic-secret` (``basic``)  |
/// | `/digest/…`    | Digest authentication (MD5, qop=auth), realm `digest-realm`, `alice` / `digest-secret` (``digest``) |
/// | `/inflate/…`   | mod_deflate's input filter inflates a `Content-Encoding: gzip` request body      |
/// | `/cookie/…`    | nothing; `?set=NAME=VALUE` answers `Set-Cookie: NAME=VALUE; Path=/`              |
///
/// Any route also sets a cookie for `?set=NAME=VALUE`. With ``TLSSetup`` the server speaks HTTPS
/// only, and can require a client certificate.
///
/// Started by ``start(tls:)``, stopped by ``stop()`` (always: ``withServer(tls:_:)`` does it).
final class ApacheServer: Sendable {
    /// HTTPS for the server: its certificate and key, and the CA its clients' certificates must
    /// come from.
    struct TLSSetup: Sendable {
        /// The server certificate (PEM), optionally followed by its chain.
        var certificate: String
        /// The server certificate's private key (PEM).
        var key: String
        /// When set, a client certificate issued by this CA (PEM) is required
        /// (`SSLVerifyClient require`); the script reports its subject and verification result.
        var clientCA: String?

        init(certificate: String, key: String, clientCA: String? = nil) {
            self.certificate = certificate
            self.key = key
            self.clientCA = clientCA
        }
    }

    /// A user name and password a route accepts, and its realm.
    struct Credentials: Sendable {
        var user: String
        var password: String
        var realm: String
    }

    /// What `/basic/…` accepts.
    static let basic = Credentials(user: "alice", password: "basic-secret", realm: "basic-realm")
    /// What `/digest/…` accepts.
    static let digest = Credentials(user: "alice", password: "digest-secret", realm: "digest-realm")

    /// What `report_cgi.py` answers (JSON): the request as the script received it, after
    /// Apache's authentication and input filters. Names as in the JSON.
    struct Report: Decodable, Sendable {
        /// A file part, as werkzeug parsed it.
        struct File: Decodable, Sendable, Equatable {
            var name: String
            var filename: String?
            var content_type: String?
            var size: Int
            var sha256: String
        }

        var method: String
        /// The request's path (REQUEST_URI without the query), e.g. `/digest/upload`.
        var path: String
        /// The part of the path after the route (PATH_INFO), e.g. `/upload`.
        var path_info: String?
        var query: String
        var content_type: String?
        /// CONTENT_LENGTH as the script got it: behind `/inflate` that is the length of the
        /// compressed body the client sent (Apache does not correct it).
        var content_length: Int?
        /// The request's Content-Encoding header.
        var content_encoding: String?
        /// `Basic` or `Digest` when Apache authenticated the request.
        var auth_type: String?
        var remote_user: String?
        /// Every request header Apache passed on (not Authorization), as `Content-Encoding`.
        var headers: [String: String]
        /// The number and SHA-256 of the body bytes the script read (inflated behind `/inflate`).
        var body_bytes: Int
        var body_sha256: String
        /// Form fields as `[name, value]` pairs (multipart/form-data or urlencoded).
        var fields: [[String]]
        var files: [File]
        /// The Cookie header.
        var cookie: String?
        /// mod_ssl's SSL_CLIENT_VERIFY (`SUCCESS` with a verified client certificate).
        var ssl_client_verify: String?
        /// mod_ssl's SSL_CLIENT_S_DN, e.g. `O=FormDataKit Tests,CN=formdatakit-test-client` (last RDN first).
        var ssl_client_s_dn: String?
    }

    /// The port the server listens on (127.0.0.1).
    let port: Int
    /// Whether it speaks HTTPS.
    let usesTLS: Bool
    /// The scratch directory: configuration, document tree, password files, logs.
    let directory: String
    private let process: SpawnedProcess

    private init(port: Int, usesTLS: Bool, directory: String, process: SpawnedProcess) {
        self.port = port
        self.usesTLS = usesTLS
        self.directory = directory
        self.process = process
    }

    /// `http(s)://127.0.0.1:<port><path>` (`path` starts with `/`, and may carry a query).
    func url(_ path: String) -> URL {
        URL(string: "\(usesTLS ? "https" : "http")://127.0.0.1:\(port)\(path)")!
    }

    /// Apache's error log (CGI errors land there too), for failure messages.
    var errorLog: String {
        (try? String(contentsOfFile: "\(directory)/\(Self.errorLogName)", encoding: .utf8)) ?? ""
    }

    /// Stops the server: SIGTERM to the Apache parent (which ends its workers), waits for it to
    /// exit (suspending, holding no thread), and removes the scratch directory. Safe to call twice.
    func stop() async {
        process.signal(SIGTERM)
        _ = await process.wait()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with a fresh server, stopped afterwards whatever `body` does.
    static func withServer<T>(tls: TLSSetup? = nil, _ body: (ApacheServer) async throws -> T) async throws -> T {
        let server = try await start(tls: tls)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    // MARK: - Starting

    private static let scratchPrefix = "fdk-apache-"
    private static let configurationName = "httpd.conf"
    private static let pidFileName = "httpd.pid"
    private static let errorLogName = "error.log"
    private static let scriptSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("report_cgi.py").path

    /// Ends servers of test processes that died, once per process (see ``RealServers/sweepStale(prefix:pidFileName:)``).
    private static let sweptStale: Bool = {
        RealServers.sweepStale(prefix: scratchPrefix, pidFileName: pidFileName)
        return true
    }()

    /// Starts a server: writes its configuration, document tree and password files into a new
    /// scratch directory, runs `apache2 -DNO_DETACH -f <configuration>` on a free port, and
    /// waits (at most 15 s, by `Task.sleep`) until it listens. A port another process took in
    /// the meantime means a new attempt on another port (five in all).
    /// - Throws: ``RealServers/Failure`` naming the missing packages, or with Apache's own
    ///   messages and error log when it does not come up.
    static func start(tls: TLSSetup? = nil) async throws -> ApacheServer {
        if let missing = RealServers.apacheMissing { throw RealServers.Failure(description: missing) }
        _ = sweptStale
        let python = try await CGIPython.probed.value
        let (port, directory, process) = try await RealServers.startOnFreePort(
            RealServers.Launch(
                name: "apache2", scratchPrefix: scratchPrefix, pidFileName: pidFileName, logName: errorLogName,
                portTakenMarkers: ["Address already in use", "could not bind"],
                prepare: { directory, port in try await writeTree(in: directory, port: port, tls: tls, python: python) },
                spawn: { directory in
                    // -DNO_DETACH, not -DFOREGROUND: both keep Apache in the foreground, but only
                    // NO_DETACH makes it a session (and process group) of its own, and Apache's
                    // shutdown sends SIGTERM to its whole process group — with FOREGROUND that is
                    // the test process's group: stopping the server would kill the test run.
                    // Messages before Apache opens its error log (configuration errors) come on
                    // standard error, which Apache then points at /dev/null and the log.
                    try SpawnedProcess(
                        RealServers.apacheBinary, ["-DNO_DETACH", "-f", "\(directory)/\(configurationName)"],
                        stdin: .null, stdout: .null, stderr: .pipe)
                }))
        return ApacheServer(port: port, usesTLS: tls != nil, directory: directory, process: process)
    }

    /// Writes the configuration, the CGI script, the password files and (when the CGI's Python
    /// is out of the worker account's reach) a copy of werkzeug into `directory`.
    private static func writeTree(in directory: String, port: Int, tls: TLSSetup?, python: CGIPython) async throws {
        let fileManager = FileManager.default
        let worker =
            RealServers.runningAsRoot
            ? try RealServers.WorkerAccount.first(of: [("www-data", "www-data"), ("nobody", "nogroup"), ("nobody", "nobody")])
            : nil
        for folder in ["cgi-bin", "htdocs"] {
            try fileManager.createDirectory(atPath: "\(directory)/\(folder)", withIntermediateDirectories: true)
        }

        // The script, its first line naming an interpreter the workers can run.
        let interpreter = try python.interpreter(reachableByOthers: worker != nil, copyingPackagesTo: "\(directory)/pylib")
        let source = try String(contentsOfFile: scriptSource, encoding: .utf8)
        let body = source.hasPrefix("#!") ? String(source.drop { $0 != "\n" }.dropFirst()) : source
        try ("#!\(interpreter.executable)\n" + body).write(toFile: "\(directory)/cgi-bin/report.py", atomically: false, encoding: .utf8)

        // Password files: htpasswd for Basic; the htdigest line written directly
        // (`user:realm:md5hex(user:realm:password)`: htdigest only reads passwords from a terminal).
        let htpasswd = try await SpawnedProcess.run(
            RealServers.htpasswdBinary,
            ["-b", "-c", "\(directory)/basic.htpasswd", basic.user, basic.password])
        guard htpasswd.termination.succeeded else {
            throw RealServers.Failure(description: "htpasswd failed: \(String(decoding: htpasswd.stdout + htpasswd.stderr, as: UTF8.self))")
        }
        let digestLine = "\(digest.user):\(digest.realm):\(try await md5Hex("\(digest.user):\(digest.realm):\(digest.password)"))\n"
        try digestLine.write(toFile: "\(directory)/digest.htdigest", atomically: false, encoding: .utf8)

        try configuration(directory: directory, port: port, tls: tls, worker: worker, pythonPath: interpreter.pythonPath)
            .write(toFile: "\(directory)/\(configurationName)", atomically: false, encoding: .utf8)
        // Whatever the umask: the workers (another account when root) read every file, run the script.
        try makeWorldReadable(directory)
    }

    /// The hex MD5 of `text`, by `md5sum` (coreutils): Foundation has no MD5 on Linux.
    private static func md5Hex(_ text: String) async throws -> String {
        let result = try await SpawnedProcess.run("/bin/sh", ["-c", "printf '%s' \"$1\" | md5sum", "sh", text])
        let hex = String(decoding: result.stdout, as: UTF8.self).prefix { $0.isHexDigit }
        guard result.termination.succeeded, hex.count == 32 else {
            throw RealServers.Failure(description: "md5sum failed: \(String(decoding: result.stdout + result.stderr, as: UTF8.self))")
        }
        return String(hex)
    }

    /// Modes 0755 for folders and the CGI script, 0644 for every other file under `directory`.
    private static func makeWorldReadable(_ directory: String) throws {
        let fileManager = FileManager.default
        try fileManager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        for case let relative as String in fileManager.enumerator(atPath: directory)?.allObjects ?? [] {
            let path = "\(directory)/\(relative)"
            var isFolder: ObjCBool = false
            guard fileManager.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            let mode = isFolder.boolValue || relative == "cgi-bin/report.py" ? 0o755 : 0o644
            try fileManager.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        }
    }

    /// The modules the configuration uses, by their module name and file. Each `LoadModule` sits
    /// in `<IfModule !name>`: Debian compiles some (unixd) into the binary, and loading a built-in
    /// module is an error.
    private static func modules(tls: Bool) -> [(name: String, file: String)] {
        var modules = [
            ("mpm_prefork_module", "mod_mpm_prefork.so"), ("unixd_module", "mod_unixd.so"),
            ("authz_core_module", "mod_authz_core.so"), ("authz_user_module", "mod_authz_user.so"),
            ("authn_core_module", "mod_authn_core.so"), ("authn_file_module", "mod_authn_file.so"),
            ("auth_basic_module", "mod_auth_basic.so"), ("auth_digest_module", "mod_auth_digest.so"),
            ("filter_module", "mod_filter.so"), ("deflate_module", "mod_deflate.so"),
            ("cgi_module", "mod_cgi.so"), ("alias_module", "mod_alias.so"), ("mime_module", "mod_mime.so"),
            ("log_config_module", "mod_log_config.so"), ("env_module", "mod_env.so"),
        ]
        if tls { modules += [("socache_shmcb_module", "mod_socache_shmcb.so"), ("ssl_module", "mod_ssl.so")] }
        return modules
    }

    /// The text of `httpd.conf`.
    private static func configuration(
        directory: String, port: Int, tls: TLSSetup?, worker: RealServers.WorkerAccount?,
        pythonPath: String?
    ) -> String {
        let script = "\(directory)/cgi-bin/report.py"
        var lines = [
            "# Generated by ApacheServer (FormDataKit tests): a throwaway server on loopback.",
            "ServerRoot \"\(directory)\"",
            "ServerName 127.0.0.1",
            "Listen 127.0.0.1:\(port)",
            "PidFile \"\(directory)/\(pidFileName)\"",
            "ErrorLog \"\(directory)/\(errorLogName)\"",
            "LogLevel warn",
            // Shared memory, sockets and lock files (mod_auth_digest's nonce table, mod_ssl's
            // session cache, the accept mutex) in the scratch directory, not /var/run.
            "DefaultRuntimeDir \"\(directory)\"",
            "Mutex file:\(directory) default",
        ]
        if let worker {
            // Apache refuses to serve as root: its workers (and the CGI) run as this account.
            lines += ["User \(worker.user)", "Group \(worker.group)"]
        }
        for module in modules(tls: tls != nil) {
            lines += [
                "<IfModule !\(module.name)>", "  LoadModule \(module.name) \"\(RealServers.apacheModules)/\(module.file)\"", "</IfModule>",
            ]
        }
        lines += [
            "StartServers 2",
            "MinSpareServers 2",
            "MaxSpareServers 8",
            "MaxRequestWorkers 32",
            "Timeout 60",
            "KeepAlive On",
            // No size limit on request bodies (Apache's default since 2.4.54 is 1 GiB).
            "LimitRequestBody 0",
            // mod_deflate refuses a body that inflates more than 200 times its size (three times
            // in a row): a gzip-compressed form with a file of zeros inflates ~1000 times.
            "DeflateInflateRatioLimit 10000",
            "DeflateInflateRatioBurst 1000",
            "TypesConfig /dev/null",
            "LogFormat \"%h %u %t \\\"%r\\\" %>s %b\" brief",
            "CustomLog \"\(directory)/access.log\" brief",
            "DocumentRoot \"\(directory)/htdocs\"",
            "SetEnv PYTHONDONTWRITEBYTECODE 1",
        ]
        if let pythonPath { lines.append("SetEnv PYTHONPATH \"\(pythonPath)\"") }
        lines += [
            "<Directory />",
            "  Require all denied",
            "  AllowOverride None",
            "  Options None",
            "</Directory>",
            // Empty, but readable: Apache looks PATH_INFO up in it for the CGI's PATH_TRANSLATED
            // (a denied lookup would log an error per request).
            "<Directory \"\(directory)/htdocs\">",
            "  Require all granted",
            "</Directory>",
            "<Directory \"\(directory)/cgi-bin\">",
            "  Require all granted",
            "  Options +ExecCGI",
            "</Directory>",
        ]
        for route in ["open", "basic", "digest", "inflate", "cookie"] {
            // The script answers /route and everything under it (the rest is its PATH_INFO).
            lines.append("ScriptAlias /\(route) \"\(script)\"")
        }
        lines += [
            "<Location /basic>",
            "  AuthType Basic",
            "  AuthName \"\(basic.realm)\"",
            "  AuthBasicProvider file",
            "  AuthUserFile \"\(directory)/basic.htpasswd\"",
            "  Require valid-user",
            "</Location>",
            "<Location /digest>",
            "  AuthType Digest",
            "  AuthName \"\(digest.realm)\"",
            "  AuthDigestDomain /digest/",
            "  AuthDigestProvider file",
            "  AuthUserFile \"\(directory)/digest.htdigest\"",
            "  Require valid-user",
            "</Location>",
            "<Location /inflate>",
            // Inflates a Content-Encoding: gzip body before mod_cgi hands it to the script.
            // (Apache still passes the script the compressed CONTENT_LENGTH; the script reads to EOF.)
            "  SetInputFilter DEFLATE",
            "</Location>",
        ]
        if let tls {
            lines += [
                "SSLEngine on",
                "SSLCertificateFile \"\(tls.certificate)\"",
                "SSLCertificateKeyFile \"\(tls.key)\"",
                "SSLSessionCache \"shmcb:\(directory)/ssl_scache(512000)\"",
                // SSL_CLIENT_S_DN, SSL_CLIENT_VERIFY, … in the CGI's environment.
                "SSLOptions +StdEnvVars",
            ]
            if let clientCA = tls.clientCA {
                // Server-wide, so it is part of the handshake (TLS 1.3 has no renegotiation, and
                // curl no post-handshake authentication, for a per-location requirement).
                lines += ["SSLVerifyClient require", "SSLVerifyDepth 3", "SSLCACertificateFile \"\(clientCA)\""]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
