import Foundation

/// A helper server run as a child process that announces where it listens: its first line on
/// standard output is `PORT <n> [<n> …]`, and it serves until its standard input closes. The
/// HTTPS test server and the tests' Python servers (form, edge and fault servers) start this way:
/// the one "start a helper and read its port" of the test suites.
package final class PortAnnouncingProcess: Sendable {
    private let process: SpawnedProcess
    /// The ports the process announced, in its order.
    package let ports: [Int]

    /// Runs `executable` with `arguments` and reads its `PORT` line.
    ///
    /// The read (which lasts as long as the child takes to start: a Python interpreter, tenths of
    /// a second, longer on a loaded machine) happens on a thread of its own, so the caller's
    /// task waits without holding a thread of the Swift concurrency pool, which the other tests'
    /// servers need (see ``SpawnedProcess``).
    /// - Throws: `description(text)` when the first line is not a `PORT` line (the process is ended).
    package init(
        executable: String = "/usr/bin/env", arguments: [String],
        failure description: (String) -> any Error
    ) async throws {
        process = try SpawnedProcess(executable, arguments, stdin: .pipe, stdout: .pipe, stderr: .inherit)
        let line = await SpawnedProcess.readFirstLine(process.standardOutput!)
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let ports = text.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard text.hasPrefix("PORT "), !ports.isEmpty else {
            process.signal(SIGKILL)
            _ = await process.wait()
            throw description(text)
        }
        self.ports = ports
    }

    /// Stops the process: closes its standard input, ends it with SIGTERM, and waits for it to
    /// exit (at most 10 s; it takes milliseconds). The wait is for the exit itself (`waitpid`),
    /// not for end-of-file on a pipe another child could hold open.
    package func stop() {
        try? process.standardInput?.close()
        process.signal(SIGTERM)
        _ = process.waitBlocking(timeout: 10)
    }

    /// Stops the process as ``stop()`` does, waiting for its exit without blocking a thread of
    /// the Swift concurrency pool.
    package func stopAndWait() async {
        try? process.standardInput?.close()
        process.signal(SIGTERM)
        _ = await process.wait()
    }
}
