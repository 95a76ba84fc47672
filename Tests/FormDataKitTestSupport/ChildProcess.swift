import Foundation
import FormDataKitTesting

/// Runs a child process to the end and collects what it printed, waiting on threads of its own
/// (never on the Swift concurrency pool, which the tests' servers need; see `SpawnedProcess`).
public enum ChildProcess {
    /// What a child printed and how it ended.
    public struct Output: Sendable {
        /// The exit status, or the signal number when ``signalled``.
        public var status: Int32
        /// Whether the child was ended by a signal (a crash or a kill) rather than exiting.
        public var signalled: Bool
        /// Everything the child wrote to standard output.
        public var stdout: Data
        /// Everything the child wrote to standard error.
        public var stderr: Data
    }

    /// Runs `executable` with `arguments`, its environment this process's plus `environment`.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
        let result = try await SpawnedProcess.run(executable, arguments, environment: environment)
        return Output(status: result.status, signalled: result.signalled, stdout: result.stdout, stderr: result.stderr)
    }
}
