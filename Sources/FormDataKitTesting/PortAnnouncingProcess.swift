import Foundation

/// A helper server run as a child process that announces where it listens: its first line on
/// standard output is `PORT <n> [<n> …]`, and it serves until its standard input closes. The
/// HTTPS test server and the tests' Python servers start this way.
package final class PortAnnouncingProcess: @unchecked Sendable {
    // `@unchecked`: every property is set once in init.
    private let process: Process
    private let input: Pipe
    /// Signalled when the process has exited (its termination handler).
    private let exited = DispatchSemaphore(value: 0)
    /// The ports the process announced, in its order.
    package let ports: [Int]

    /// Runs `executable` with `arguments` and reads its `PORT` line.
    /// - Throws: `description(text)` when the first line is not a `PORT` line (the process is ended).
    package init(executable: String = "/usr/bin/env", arguments: [String],
                 failure description: (String) -> any Error) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        var line = Data()
        let handle = output.fileHandleForReading
        while !line.contains(0x0A) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let ports = text.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard text.hasPrefix("PORT "), !ports.isEmpty else {
            process.terminate()
            _ = exited.wait(timeout: .now() + 10)
            throw description(text)
        }
        self.ports = ports
    }

    /// Stops the process: closes its standard input, ends it with SIGTERM, and waits for it to
    /// exit (at most 10 s).
    ///
    /// Not `waitUntilExit()`: on Linux it spins the run loop at full CPU while it waits, and
    /// closing standard input alone is not enough — a child started at the same moment by another
    /// test can inherit the pipe's write end, so end-of-file never arrives. Both together held up
    /// the whole test process (two cores busy, every receiver starved).
    package func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        _ = exited.wait(timeout: .now() + 10)
    }
}
