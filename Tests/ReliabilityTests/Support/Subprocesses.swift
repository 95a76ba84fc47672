#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ProcessIsolation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Child processes for the fault tests, waited for on GCD threads (never on the Swift
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
    func get() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
    func update<T>(_ body: (inout Value) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(&value) }
}

/// The misbehaving server (Support/fault_server.py), one per test that needs it.
final class FaultServer: @unchecked Sendable {
    let process: Process
    let input: Pipe
    let port: Int

    private init(process: Process, input: Pipe, port: Int) {
        self.process = process
        self.input = input
        self.port = port
    }

    static func start() async throws -> FaultServer {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("fault_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var bytes: [UInt8] = []
                var byte: UInt8 = 0
                while read(output.fileHandleForReading.fileDescriptor, &byte, 1) == 1, byte != 0x0A { bytes.append(byte) }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
        guard let port = Int(line) else { throw PythonOracle.Failure(description: "fault_server.py did not start: \(line)") }
        return FaultServer(process: process, input: input, port: port)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Every request the server saw.
    func log() async throws -> [[String: Any]] {
        let request = URLRequest(url: url("/log"))
        let data: Data = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, _, error in
                if let data { continuation.resume(returning: data) } else {
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

    func stop() async {
        try? input.fileHandleForWriting.close()
        let process = self.process
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }
}

/// Runs CPU- or I/O-heavy synchronous `work` on a GCD thread, so a test never holds one of the
/// few Swift concurrency pool threads (other suites' servers need them) for long.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
