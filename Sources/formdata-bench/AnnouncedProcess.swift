#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A helper process that serves on a loopback port it announces with a `PORT <n>` line on its
/// standard output, and stops when its standard input closes: the `resume` workload's
/// resumable-upload server and cutting relay.
///
/// Its standard input is a pipe whose write end only this process holds (close-on-exec, so no
/// other child inherits it): it ends at ``stop(timeout:)``, and also when the benchmark ends
/// however it ends (an error, a signal), as the pipe then closes.
final class AnnouncedProcess {
    /// How a start ended: the process announced its port, or it exited before it did.
    enum Start {
        /// Serving on ``AnnouncedProcess/port``.
        case running(AnnouncedProcess)
        /// Exited with `status` (-1 after a signal) before announcing a port; `stderr` is what it
        /// wrote there.
        case exited(status: Int32, stderr: String)
    }

    /// The process id.
    let pid: pid_t
    /// The loopback port it announced.
    private(set) var port = 0
    /// The write end of its standard input (-1 once closed).
    private var input: Int32
    /// The read end of its standard output, kept open until it stops (it never gets SIGPIPE).
    private var output: Int32
    /// Its exit status once waited for.
    private var exitStatus: Int32?

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.input = input
        self.output = output
    }

    deinit { _ = stop(timeout: 5) }

    /// Starts `arguments` (argv[0] looked up on PATH), its standard error written to
    /// `stderrPath`, and reads its standard output until a `PORT <n>` line; kills it and throws
    /// when none comes within `timeout` seconds.
    static func start(_ arguments: [String], stderrPath: String, timeout: Double = 30) throws -> Start {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0 else { throw BenchError.childFailed("pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&stdoutPipe) == 0 else {
            close(stdinPipe[0])
            close(stdinPipe[1])
            throw BenchError.childFailed("pipe: \(String(cString: strerror(errno)))")
        }
        for fd in stdinPipe + stdoutPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var cArgs = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArgs { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, &cArgs, environ)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        guard spawned == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            throw BenchError.childFailed("could not start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        let process = AnnouncedProcess(pid: pid, input: stdinPipe[1], output: stdoutPipe[0])
        switch process.readPort(timeout: timeout) {
        case .some(let port):
            process.port = port
            return .running(process)
        case .none where process.hasExited(within: 5):
            let status = process.stop(timeout: 0)
            let text = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            return .exited(status: status, stderr: text.trimmingCharacters(in: .whitespacesAndNewlines))
        case .none:
            _ = process.stop(timeout: 0)
            throw BenchError.childFailed("\(arguments[0]) announced no port within \(Int(timeout)) s")
        }
    }

    /// Closes its standard input and waits up to `timeout` seconds for it to exit, then sends
    /// SIGTERM (and SIGKILL 5 s later). Returns its exit status (-1 after a signal); once
    /// stopped, later calls return the same.
    @discardableResult
    func stop(timeout: Double = 30) -> Int32 {
        if let exitStatus { return exitStatus }
        if input >= 0 {
            close(input)
            input = -1
        }
        var status = waitForExit(within: timeout)
        if status == nil {
            kill(pid, SIGTERM)
            status = waitForExit(within: 5)
        }
        if status == nil {
            kill(pid, SIGKILL)
            status = waitForExit(within: .infinity)
        }
        if output >= 0 {
            close(output)
            output = -1
        }
        exitStatus = status ?? -1
        return exitStatus ?? -1
    }

    /// Reads standard output until a `PORT <n>` line (its port), end of file or `timeout` (nil).
    private func readPort(timeout: Double) -> Int? {
        while let line = readLine(timeout: timeout) {
            if line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespaces)) { return port }
        }
        return nil
    }

    /// Writes `line` to its standard input and returns the next line it writes (nil at end of
    /// file or after `timeout` seconds): a helper that answers commands (W9's receiver).
    func ask(_ line: String, timeout: Double = 30) -> String? {
        guard input >= 0 else { return nil }
        let bytes = Array((line + "\n").utf8)
        guard bytes.withUnsafeBytes({ write(input, $0.baseAddress, $0.count) }) == bytes.count else { return nil }
        return readLine(timeout: timeout)
    }

    /// Bytes read from standard output past the last line returned.
    private var pending: [UInt8] = []

    /// The next line of standard output; nil at end of file or after `timeout` seconds.
    private func readLine(timeout: Double) -> String? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            guard DispatchTime.now().uptimeNanoseconds < deadline else { return nil }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(1, (deadline - min(deadline, DispatchTime.now().uptimeNanoseconds)) / 1_000_000))
            let ready = poll(&poller, 1, left)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let count = read(output, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            pending += buffer[0..<count]
        }
    }

    /// Whether it exits within `seconds` (its status is then kept for ``stop(timeout:)``).
    private func hasExited(within seconds: Double) -> Bool {
        guard let status = waitForExit(within: seconds) else { return false }
        exitStatus = status
        if input >= 0 { close(input) }
        if output >= 0 { close(output) }
        input = -1
        output = -1
        return true
    }

    /// Waits up to `seconds` for it to exit: its exit status (-1 after a signal), or nil.
    private func waitForExit(within seconds: Double) -> Int32? {
        let deadline = seconds.isFinite ? DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9) : .max
        while true {
            var status: Int32 = 0
            let waited = waitpid(pid, &status, seconds.isFinite ? WNOHANG : 0)
            if waited == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1 }
            if waited < 0 && errno != EINTR { return -1 }
            if DispatchTime.now().uptimeNanoseconds >= deadline { return nil }
            if waited == 0 { usleep(10_000) }
        }
    }
}
