#if canImport(Glibc)
import Glibc
#endif
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Child processes for the fault tests, waited for on threads of their own (never on the Swift
/// concurrency pool).
enum Subprocess {
    /// The `reliability-helper` executable built beside the test binary.
    static var helperPath: String {
        // The test binary is …/debug/FormDataKitPackageTests.xctest (a file on Linux) or a bundle.
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("reliability-helper").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return "reliability-helper"
    }

    /// Runs `arguments` (via /usr/bin/env) with `environment` added, and returns its output.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Output {
        try await ChildProcess.run("/usr/bin/env", arguments, environment: environment)
    }
}

extension ChildProcess.Output {
    /// The helper's JSON report (its last stdout line).
    var report: [String: Any] {
        let lines = stdout.split(separator: 0x0A)
        guard let last = lines.last, let object = try? JSONSerialization.jsonObject(with: Data(last)) as? [String: Any]
        else { return [:] }
        return object
    }
}

/// A tiny lock-protected box for test bookkeeping.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func get() -> Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
    func set(_ newValue: Value) {
        lock.lock()
        value = newValue
        lock.unlock()
    }
    func update<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// The misbehaving server (Support/fault_server.py), one per test that needs it.
final class FaultServer: Sendable {
    private let process: PortAnnouncingProcess
    let port: Int

    private init(process: PortAnnouncingProcess) {
        self.process = process
        self.port = process.ports[0]
    }

    static func start() async throws -> FaultServer {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("fault_server.py")
        let process = try await PortAnnouncingProcess(arguments: ["python3", script.path]) { line in
            PythonOracle.Failure(description: "fault_server.py did not start: \(line)")
        }
        return FaultServer(process: process)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Every request the server saw.
    func log() async throws -> [[String: Any]] {
        let request = URLRequest(url: url("/log"))
        let data: Data = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, _, error in
                if let data {
                    continuation.resume(returning: data)
                } else {
                    continuation.resume(throwing: error ?? PythonOracle.Failure(description: "no log"))
                }
            }.resume()
        }
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
    }

    /// The log entries whose path is `path`.
    func entries(_ path: String) async throws -> [[String: Any]] {
        try await log().filter { $0["path"] as? String == path }
    }

    /// Closes the server's standard input (it exits) and waits for it.
    func stop() async {
        await process.stopAndWait()
    }
}

/// Runs CPU- or I/O-heavy synchronous `work` on a thread of its own, so a test never holds one
/// of the few Swift concurrency pool threads (other suites' servers need them) for long. Not a
/// GCD queue: on Linux, Swift concurrency runs on GCD's global queues' threads.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
