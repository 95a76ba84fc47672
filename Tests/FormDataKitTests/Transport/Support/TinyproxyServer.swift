#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting

/// A real HTTP proxy (Debian's `tinyproxy`) on 127.0.0.1 and a free port, run in the foreground
/// (`tinyproxy -d -c <configuration>`) as a child process from a configuration in a scratch
/// directory of its own — never as a system service.
///
/// It forwards plain HTTP requests (to 127.0.0.1 too: tinyproxy has no rule against loopback
/// upstreams) and `CONNECT` tunnels to any port, adding `Via: 1.1 <host> (tinyproxy/<version>)`
/// to forwarded requests. With a user name and password it requires proxy Basic authentication
/// (`BasicAuth`): no `Proxy-Authorization` is answered 407 with `Proxy-Authenticate`; wrong
/// credentials are answered **401** with `WWW-Authenticate` by tinyproxy up to 1.11.2
/// (tinyproxy issue #532, fixed after 1.11.2: 407).
///
/// Started by ``start(username:password:)``, stopped by ``stop()`` (always:
/// ``withServer(username:password:_:)`` does it).
final class TinyproxyServer: Sendable {
    /// The port the proxy listens on (127.0.0.1).
    let port: Int
    /// The proxy user name, when it requires authentication.
    let username: String?
    /// The proxy password, when it requires authentication.
    let password: String?
    /// The scratch directory: configuration, log, pid file.
    let directory: String
    private let process: SpawnedProcess

    private init(port: Int, username: String?, password: String?, directory: String, process: SpawnedProcess) {
        self.port = port
        self.username = username
        self.password = password
        self.directory = directory
        self.process = process
    }

    /// `http://127.0.0.1:<port>`, the proxy's URL for a client.
    var proxyURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// tinyproxy's log (connections, authentication failures, upstream errors), for failure messages.
    var log: String {
        (try? String(contentsOfFile: "\(directory)/\(Self.logName)", encoding: .utf8)) ?? ""
    }

    /// Stops the proxy: SIGTERM, waits for it to exit (suspending, holding no thread), and
    /// removes the scratch directory. Safe to call twice.
    func stop() async {
        process.signal(SIGTERM)
        _ = await process.wait()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with a fresh proxy, stopped afterwards whatever `body` does.
    static func withServer<T>(
        username: String? = nil, password: String? = nil,
        _ body: (TinyproxyServer) async throws -> T
    ) async throws -> T {
        let server = try await start(username: username, password: password)
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

    private static let scratchPrefix = "fdk-tinyproxy-"
    private static let configurationName = "tinyproxy.conf"
    private static let pidFileName = "tinyproxy.pid"
    private static let logName = "tinyproxy.log"

    /// Ends proxies of test processes that died, once per process (see ``RealServers/sweepStale(prefix:pidFileName:)``).
    private static let sweptStale: Bool = {
        RealServers.sweepStale(prefix: scratchPrefix, pidFileName: pidFileName)
        return true
    }()

    /// Starts a proxy on a free port, requiring `username`/`password` (proxy Basic
    /// authentication) when both are given, and waits (at most 15 s, by `Task.sleep`) until it
    /// listens. A port another process took in the meantime means a new attempt on another port
    /// (five in all).
    /// - Throws: ``RealServers/Failure`` naming the missing package, for credentials tinyproxy's
    ///   configuration cannot hold (empty, or with white space or quotes), or with tinyproxy's
    ///   messages when it does not come up.
    static func start(username: String? = nil, password: String? = nil) async throws -> TinyproxyServer {
        if let missing = RealServers.tinyproxyMissing { throw RealServers.Failure(description: missing) }
        guard (username == nil) == (password == nil) else {
            throw RealServers.Failure(description: "TinyproxyServer: give both a user name and a password, or neither")
        }
        for credential in [username, password].compactMap({ $0 })
        where credential.isEmpty
            || credential.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "#" })
        {
            throw RealServers.Failure(
                description: "TinyproxyServer: \"\(credential)\" cannot be a BasicAuth word (empty, white space, quote or #)")
        }
        _ = sweptStale
        let (port, directory, process) = try await RealServers.startOnFreePort(
            RealServers.Launch(
                name: "tinyproxy", scratchPrefix: scratchPrefix, pidFileName: pidFileName, logName: logName,
                portTakenMarkers: ["Could not create listening sockets"],
                prepare: { directory, port in try writeConfiguration(in: directory, port: port, username: username, password: password) },
                spawn: { directory in
                    // Fatal start errors ("Could not create listening sockets.") come on standard error.
                    try SpawnedProcess(
                        RealServers.tinyproxyBinary, ["-d", "-c", "\(directory)/\(configurationName)"],
                        stdin: .null, stdout: .null, stderr: .pipe)
                }))
        return TinyproxyServer(port: port, username: username, password: password, directory: directory, process: process)
    }

    /// Writes `tinyproxy.conf` (and, as root, the log file for the account tinyproxy switches to).
    private static func writeConfiguration(in directory: String, port: Int, username: String?, password: String?) throws {
        var lines = [
            "# Generated by TinyproxyServer (FormDataKit tests): a throwaway proxy on loopback.",
            "Port \(port)",
            "Listen 127.0.0.1",
            "Allow 127.0.0.1",
            "Timeout 60",
            "MaxClients 64",
            "LogLevel Info",
            "LogFile \"\(directory)/\(logName)\"",
            // Written as the starting account, after the port is bound: the start waits for it.
            "PidFile \"\(directory)/\(pidFileName)\"",
        ]
        if let username, let password { lines.append("BasicAuth \(username) \(password)") }
        if RealServers.runningAsRoot {
            // tinyproxy switches away from root itself; this names an account that exists.
            let worker = try RealServers.WorkerAccount.first(of: [("nobody", "nogroup"), ("nobody", "nobody")])
            lines += ["User \(worker.user)", "Group \(worker.group)"]
            // tinyproxy opens its log only after switching accounts (and fails to create it in a
            // folder root owns): the file is made here and handed over.
            let log = "\(directory)/\(logName)"
            guard FileManager.default.createFile(atPath: log, contents: nil, attributes: [.posixPermissions: 0o644]),
                chown(log, worker.uid, worker.gid) == 0
            else {
                throw RealServers.Failure(description: "could not prepare \(log) for \(worker.user): \(String(cString: strerror(errno)))")
            }
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: "\(directory)/\(configurationName)", atomically: false, encoding: .utf8)
    }
}
