import Foundation

/// Runs a child process to the end and collects what it printed, waiting on GCD threads (never
/// on the Swift concurrency pool, which the tests' servers need).
public enum ChildProcess {
    /// What a child printed and how it ended.
    public struct Output: Sendable {
        /// The exit status, or the signal number when ``signalled``.
        public var status: Int32
        /// Whether the child was ended by a signal (a crash or a kill) rather than exiting.
        public var signalled: Bool
        public var stdout: Data
        public var stderr: Data
    }

    /// Runs `executable` with `arguments`, its environment this process's plus `environment`.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                // Both pipes are drained at once, so a child that fills one never blocks.
                let errData = ErrorData()
                let group = DispatchGroup()
                group.enter()
                DispatchQueue.global().async {
                    errData.data = err.fileHandleForReading.readDataToEndOfFile()
                    group.leave()
                }
                let outData = out.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                process.waitUntilExit()
                continuation.resume(returning: Output(
                    status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                    stdout: outData, stderr: errData.data))
            }
        }
    }

    /// Standard error as read on its own thread; read only after that thread has left the group.
    private final class ErrorData: @unchecked Sendable {
        var data = Data()
    }
}
