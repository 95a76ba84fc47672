#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting

/// Whether the real servers of the transport tests (``ApacheServer``, ``TinyproxyServer``: Debian
/// packages, run as child processes on loopback) can run on this machine.
///
/// A test that needs one says so with
/// `.enabled(if: RealServers.apacheMissing == nil || RealServers.required, "…")`: on a machine
/// without the packages it is skipped with that note; in CI (`.ci/run` installs the packages and
/// sets `FORMDATAKIT_REQUIRE_REAL_SERVERS=1`) it runs anyway, and a missing server fails it with
/// the note as the error.
enum RealServers {
    /// Debian's Apache binary (package `apache2-bin`, pulled in by `apache2`).
    static let apacheBinary = "/usr/sbin/apache2"
    /// Where Debian keeps Apache's loadable modules.
    static let apacheModules = "/usr/lib/apache2/modules"
    /// `htpasswd`, which makes the Basic password file (package `apache2-utils`).
    static let htpasswdBinary = "/usr/bin/htpasswd"
    /// Debian's tinyproxy binary (package `tinyproxy-bin`, pulled in by `tinyproxy`).
    static let tinyproxyBinary = "/usr/bin/tinyproxy"
    /// The independent client of the harness tests (package `curl`).
    static let curlBinary = "/usr/bin/curl"

    /// Why ``ApacheServer`` cannot run here (naming the packages to install), or nil when it can.
    static var apacheMissing: String? {
        let needed =
            [apacheBinary, htpasswdBinary]
            + ["mod_mpm_prefork.so", "mod_cgi.so", "mod_auth_digest.so", "mod_deflate.so", "mod_ssl.so"]
            .map { "\(apacheModules)/\($0)" }
        let missing = needed.filter { !FileManager.default.fileExists(atPath: $0) }
        guard !missing.isEmpty else { return nil }
        return "Apache is not installed (missing \(missing.joined(separator: ", "))): "
            + "install the Debian packages apache2 apache2-utils (sudo apt-get install apache2 apache2-utils)"
    }

    /// Why ``TinyproxyServer`` cannot run here (naming the package to install), or nil when it can.
    static var tinyproxyMissing: String? {
        guard !FileManager.default.isExecutableFile(atPath: tinyproxyBinary) else { return nil }
        return
            "tinyproxy is not installed (missing \(tinyproxyBinary)): install the Debian package tinyproxy (sudo apt-get install tinyproxy)"
    }

    /// Why the harness tests' client cannot run here, or nil when it can.
    static var curlMissing: String? {
        guard !FileManager.default.isExecutableFile(atPath: curlBinary) else { return nil }
        return "curl is not installed (missing \(curlBinary)): install the Debian package curl"
    }

    /// Whether a missing server must fail the tests rather than skip them:
    /// `FORMDATAKIT_REQUIRE_REAL_SERVERS=1` (set by `.ci/run`).
    static var required: Bool {
        ProcessInfo.processInfo.environment["FORMDATAKIT_REQUIRE_REAL_SERVERS"] == "1"
    }

    /// Why a real server did not start (or cannot), with what it said.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}

// MARK: - What both servers need

extension RealServers {
    /// The unprivileged account a server started as root switches to: `User`/`Group` of its
    /// configuration. Apache refuses to serve as root; tinyproxy switches on its own when run as
    /// root, and this names an account that surely exists.
    struct WorkerAccount: Sendable {
        var user: String
        var group: String
        var uid: uid_t
        var gid: gid_t

        /// The first of `candidates` (user, group) that both exist on this machine.
        static func first(of candidates: [(user: String, group: String)]) throws -> WorkerAccount {
            for candidate in candidates {
                guard let user = getpwnam(candidate.user), let group = getgrnam(candidate.group) else { continue }
                return WorkerAccount(user: candidate.user, group: candidate.group, uid: user.pointee.pw_uid, gid: group.pointee.gr_gid)
            }
            throw Failure(
                description:
                    "running as root, but none of the accounts \(candidates.map { "\($0.user):\($0.group)" }) exists to run the server's workers as"
            )
        }
    }

    /// Whether the process runs as root (its servers then switch to a ``WorkerAccount``).
    static var runningAsRoot: Bool { geteuid() == 0 }

    /// Makes a scratch directory `<temporary directory>/<prefix><pid>-<uuid>` (mode 0755) for a
    /// server's configuration, files and logs.
    ///
    /// As root, the server's workers run as another account that must reach the directory: when
    /// some folder above the temporary directory is not world-searchable (`TMPDIR` under
    /// `/root`), `/tmp` is used instead.
    static func makeScratchDirectory(prefix: String) throws -> String {
        var base = NSTemporaryDirectory()
        if runningAsRoot, !isWorldReachable(base) { base = "/tmp/" }
        if !base.hasSuffix("/") { base += "/" }
        let directory = base + "\(prefix)\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        return directory
    }

    /// Whether every folder from `/` down to `path` (symbolic links resolved) can be searched by
    /// any account, and `path` itself read (and, when it is a folder, searched): what a server's
    /// worker account needs to use a file or folder it does not own.
    static func isWorldReachable(_ path: String) -> Bool {
        guard let resolved = realpath(path, nil) else { return false }
        defer { free(resolved) }
        let full = String(cString: resolved)
        var prefix = ""
        var components = full.split(separator: "/").map(String.init)
        let last = components.popLast()
        for component in components {
            prefix += "/" + component
            var info = stat()
            guard stat(prefix, &info) == 0, info.st_mode & S_IXOTH != 0 else { return false }
        }
        guard let last else { return true }  // "/"
        var info = stat()
        guard stat(prefix + "/" + last, &info) == 0, info.st_mode & S_IROTH != 0 else { return false }
        return (info.st_mode & S_IFMT) != S_IFDIR || info.st_mode & S_IXOTH != 0
    }

    /// A port on 127.0.0.1 that nothing listens on right now: bound (port 0) and closed again.
    /// Another process may take it before the server binds it; the servers' `start` retries then.
    static func freeLoopbackPort() throws -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket(): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw Failure(description: "bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: actual.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` (a connect on loopback:
    /// refused or accepted at once, no waiting).
    static func acceptsConnections(port: Int) -> Bool {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0
    }

    /// How waiting for a server's start ended.
    enum StartOutcome {
        /// The server wrote its pid file and accepts connections.
        case listening
        /// The server process ended first.
        case exited(SpawnedProcess.Termination)
        /// Neither within the time allowed.
        case timedOut
    }

    /// How to start one server child (see ``startOnFreePort(_:)``).
    struct Launch {
        /// The server's name in messages (`apache2`, `tinyproxy`).
        var name: String
        /// The scratch directories' name prefix.
        var scratchPrefix: String
        /// The pid file and the log, relative to the scratch directory.
        var pidFileName: String
        var logName: String
        /// Text in its messages that means the port was taken (then another port is tried).
        var portTakenMarkers: [String]
        /// Writes the configuration for `port` into the scratch directory.
        var prepare: (_ directory: String, _ port: Int) async throws -> Void
        /// Starts the server (standard error piped: its messages before the log opens).
        var spawn: (_ directory: String) throws -> SpawnedProcess
    }

    /// Starts `launch`'s server on a free loopback port in a new scratch directory and waits
    /// (at most 15 s, suspending) until it listens; a port taken in the meantime means a new
    /// attempt on another port (five in all). On every failure the child is ended and the scratch
    /// directory removed.
    /// - Returns: the port, the scratch directory and the running child.
    /// - Throws: ``Failure`` with the server's own messages and log when it does not come up.
    static func startOnFreePort(_ launch: Launch) async throws -> (port: Int, directory: String, process: SpawnedProcess) {
        var portTaken = ""
        for _ in 1...5 {
            let directory = try makeScratchDirectory(prefix: launch.scratchPrefix)
            var process: SpawnedProcess?
            do {
                let port = try freeLoopbackPort()
                try await launch.prepare(directory, port)
                let started = try launch.spawn(directory)
                process = started
                let messages = Task { await SpawnedProcess.readToEnd(started.standardError!) }
                switch try await waitUntilListening(started, port: port, pidFile: "\(directory)/\(launch.pidFileName)") {
                case .listening:
                    return (port, directory, started)
                case .exited(let termination):
                    let said = String(decoding: await messages.value, as: UTF8.self) + tail(ofFile: "\(directory)/\(launch.logName)")
                    try? FileManager.default.removeItem(atPath: directory)
                    if launch.portTakenMarkers.contains(where: { said.contains($0) }) {
                        portTaken = said
                        continue
                    }
                    throw Failure(description: "\(launch.name) exited (\(termination)) instead of listening on port \(port):\n\(said)")
                case .timedOut:
                    started.signal(SIGKILL)
                    _ = await started.wait()
                    // Not the early messages: a child left behind may hold standard error open.
                    let said = tail(ofFile: "\(directory)/\(launch.logName)")
                    try? FileManager.default.removeItem(atPath: directory)
                    throw Failure(description: "\(launch.name) did not listen on port \(port) within 15 s:\n\(said)")
                }
            } catch {
                // A failed preparation, or a cancelled wait: no server or directory left behind.
                if let process, process.isRunning {
                    process.signal(SIGKILL)
                    _ = await process.wait()
                }
                try? FileManager.default.removeItem(atPath: directory)
                throw error
            }
        }
        throw Failure(description: "\(launch.name) found its port taken five times in a row; last time:\n\(portTaken)")
    }

    /// Waits (by `Task.sleep`, holding no thread) until `process` has written its own pid into
    /// `pidFile` and 127.0.0.1:`port` accepts connections, or until it exits, or `timeout`
    /// seconds pass.
    ///
    /// Both servers write the pid file only after they bound their port, so the pid check makes
    /// sure the listener found on `port` is this server and not another process that took the
    /// free port first.
    static func waitUntilListening(
        _ process: SpawnedProcess, port: Int, pidFile: String,
        // A minute (it was 15 s): Apache or tinyproxy start in a second or two, several times
        // that on a machine whose cores are busy with other builds; the poll returns at once.
        timeout: TimeInterval = 60
    ) async throws -> StartOutcome {
        // Polled on a thread of its own: in a full parallel run the Swift concurrency pool can be
        // busy for many seconds, and a poll that waited for it timed out a server that had been
        // listening all along (seen in clean-clone runs). The last check comes after the
        // deadline, so a late wake-up never decides alone.
        await SpawnedProcess.onOwnThread { () -> StartOutcome in
            let deadline = Date(timeIntervalSinceNow: timeout)
            while true {
                if !process.isRunning {
                    return .exited(process.waitBlocking(timeout: 10) ?? SpawnedProcess.Termination(status: -1, signalled: false))
                }
                let written = (try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                if written == String(process.pid), acceptsConnections(port: port) { return .listening }
                if Date() >= deadline { return .timedOut }
                usleep(25_000)
            }
        }
    }

    /// The last `count` lines of the text file at `path` ("" when it cannot be read).
    static func tail(ofFile path: String, lines count: Int = 30) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "" }
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
    }

    /// Ends the servers left by test processes that died (killed mid-test, so no `stop()` ran)
    /// and removes their scratch directories: for each `<prefix><pid>-…` directory in the
    /// temporary directories whose test process is gone, the server whose pid is in its
    /// `pidFileName` is sent SIGTERM — only when its command line names that directory (the pid
    /// may have been reused) — and the directory is removed.
    static func sweepStale(prefix: String, pidFileName: String) {
        let bases = Set([NSTemporaryDirectory(), "/tmp/"].map { $0.hasSuffix("/") ? $0 : $0 + "/" })
        for base in bases {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(prefix) {
                guard let owner = Int32(name.dropFirst(prefix.count).split(separator: "-").first ?? ""),
                    owner != getpid(), kill(owner, 0) == -1, errno == ESRCH
                else { continue }
                let directory = base + name
                if let text = try? String(contentsOfFile: "\(directory)/\(pidFileName)", encoding: .utf8),
                    let server = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                    let commandLine = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(server)/cmdline")),
                    String(decoding: commandLine, as: UTF8.self).contains(directory)
                {
                    kill(server, SIGTERM)
                }
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }
}
