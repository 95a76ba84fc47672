#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// A child process for the test helpers (Python servers and oracles, `openssl`, `gzip`, the
/// `formdata` tool, isolated test children), started with `posix_spawn` rather than Foundation's
/// `Process`, for two reasons measured in full parallel test runs on Linux:
///
/// - **Nothing leaks into other children.** Every descriptor but the child's own standard
///   input/output/error is closed in the child (`closefrom(3)` as a spawn action, done by the
///   kernel side of the spawn, so a pipe another thread opens at the same moment cannot slip
///   through). Foundation closes the descriptors it sees open before the spawn, so a child
///   started while another test was starting its own inherited that test's pipes and Foundation's
///   exit-notification socket: the other child's end-of-file and exit were not seen until this
///   one ended too — for a server child, the rest of the test run.
/// - **No wait holds a thread of the Swift concurrency pool** (two threads on a two-core machine,
///   shared by every test running at once, and by the tests' embedded receivers). The exit is
///   awaited by `waitpid` on a thread of its own; output is read on threads of their own; the
///   async methods suspend instead of blocking.
package final class SpawnedProcess: @unchecked Sendable {
    // `@unchecked`: the lets are set once in init; `state` is behind `lock`.

    /// Where a standard stream of the child goes.
    package enum Stream: Sendable {
        /// A pipe to this process (``standardInput``, ``standardOutput``, ``standardError``).
        case pipe
        /// `/dev/null`.
        case null
        /// This process's own (for a server's error messages in the test log).
        case inherit
        /// Standard error only: the same pipe or file as standard output.
        case sameAsOutput
    }

    /// How the child ended.
    package struct Termination: Sendable, Equatable {
        /// The exit status, or the signal number when ``signalled``.
        package var status: Int32
        /// Whether a signal ended the child (a crash, a kill) rather than `exit`.
        package var signalled: Bool
        /// Whether it exited with status 0.
        package var succeeded: Bool { !signalled && status == 0 }

        /// An ending with `status` (the signal number when `signalled`).
        package init(status: Int32, signalled: Bool) {
            self.status = status
            self.signalled = signalled
        }
    }

    /// What a child printed and how it ended (``run(_:_:environment:)``).
    package struct Output: Sendable {
        package var termination: Termination
        package var stdout: Data
        package var stderr: Data
        /// The exit status, or the signal number when ``signalled``.
        package var status: Int32 { termination.status }
        /// Whether a signal ended the child.
        package var signalled: Bool { termination.signalled }
    }

    /// A spawn that failed, naming the executable.
    package struct SpawnFailure: Error, CustomStringConvertible {
        package var description: String
    }

    /// The child's process id.
    package let pid: pid_t
    /// The write end of the child's standard input, when it was ``Stream/pipe``. Closing it ends
    /// the child's input.
    package let standardInput: FileHandle?
    /// The read end of the child's standard output, when it was ``Stream/pipe``.
    package let standardOutput: FileHandle?
    /// The read end of the child's standard error, when it was ``Stream/pipe``.
    package let standardError: FileHandle?

    private let lock = NSCondition()
    private var termination: Termination?
    private var waiters: [CheckedContinuation<Termination, Never>] = []

    /// Starts `executable` (an absolute path) with `arguments`; its environment is this
    /// process's, with `environment` added over it.
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        stdin: Stream = .null, stdout: Stream = .pipe, stderr: Stream = .pipe
    ) throws {
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []  // the child's ends, closed here after the spawn
        defer { childEnds.forEach { close($0) } }

        func pipeEnds() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw SpawnFailure(description: "pipe: \(String(cString: strerror(errno)))") }
            // Close-on-exec in this process: a child spawned by other code (not through this
            // type) does not keep the pipe open either.
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }

        var inputHandle: FileHandle?
        switch stdin {
        case .pipe:
            let ends = try pipeEnds()
            posix_spawn_file_actions_adddup2(&actions, ends.read, 0)
            childEnds.append(ends.read)
            inputHandle = FileHandle(fileDescriptor: ends.write, closeOnDealloc: true)
        case .null, .sameAsOutput:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .inherit:
            break
        }
        var outputHandle: FileHandle?
        switch stdout {
        case .pipe:
            let ends = try pipeEnds()
            posix_spawn_file_actions_adddup2(&actions, ends.write, 1)
            childEnds.append(ends.write)
            outputHandle = FileHandle(fileDescriptor: ends.read, closeOnDealloc: true)
        case .null, .sameAsOutput:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        case .inherit:
            break
        }
        var errorHandle: FileHandle?
        switch stderr {
        case .pipe:
            let ends = try pipeEnds()
            posix_spawn_file_actions_adddup2(&actions, ends.write, 2)
            childEnds.append(ends.write)
            errorHandle = FileHandle(fileDescriptor: ends.read, closeOnDealloc: true)
        case .null:
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .sameAsOutput:
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .inherit:
            break
        }
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t = nil
        let closeOthers = Int16(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
        var attributes = posix_spawnattr_t()
        let closeOthers: Int16 = 0
        if let closeFrom = Self.addCloseFrom {
            _ = closeFrom(&actions, 3)
        }
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Default dispositions for the signals a test process may ignore (SIGPIPE), an empty mask.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK) | closeOthers)

        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            inputHandle = nil
            outputHandle = nil
            errorHandle = nil
            throw SpawnFailure(description: "\(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        standardInput = inputHandle
        standardOutput = outputHandle
        standardError = errorHandle
        let waiter = Thread { [self] in self.reap() }
        waiter.name = "SpawnedProcess.wait \(child)"
        waiter.start()
    }

    #if !canImport(Darwin)
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+), looked up at run time: Swift's
    /// Glibc module does not declare it (it needs `_GNU_SOURCE`).
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
    #endif

    /// Runs on the waiter thread: blocks in `waitpid` until the child ends, then wakes everyone waiting.
    private func reap() {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result == -1 && errno == EINTR
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, written out (they are macros).
        let signal = status & 0x7F
        let ended =
            result == -1
            ? Termination(status: -1, signalled: false)
            : (signal != 0 && signal != 0x7F
                ? Termination(status: signal, signalled: true)
                : Termination(status: (status >> 8) & 0xFF, signalled: false))
        lock.lock()
        termination = ended
        let waiting = waiters
        waiters = []
        lock.broadcast()
        lock.unlock()
        waiting.forEach { $0.resume(returning: ended) }
    }

    /// Whether the child has not ended yet.
    package var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return termination == nil
    }

    /// Sends `signal` (SIGTERM by default) to the child, unless it has ended.
    package func signal(_ signal: Int32 = SIGTERM) {
        lock.lock()
        defer { lock.unlock() }
        if termination == nil { kill(pid, signal) }
    }

    /// Waits (suspending, holding no thread) until the child ends.
    package func wait() async -> Termination {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let termination {
                lock.unlock()
                continuation.resume(returning: termination)
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }

    /// Blocks the calling thread until the child ends or `timeout` seconds pass; nil on timeout.
    /// For threads of their own, not for the Swift concurrency pool.
    package func waitBlocking(timeout: TimeInterval) -> Termination? {
        lock.lock()
        defer { lock.unlock() }
        if timeout.isFinite {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while termination == nil, lock.wait(until: deadline) {}
        } else {
            // Not `wait(until: .distantFuture)`: Foundation traps converting it to a timespec.
            while termination == nil { lock.wait() }
        }
        return termination
    }

    // MARK: - Reading

    /// Reads `handle` to its end on a thread of its own.
    package static func readToEnd(_ handle: FileHandle) async -> Data {
        await onOwnThread { handle.readDataToEndOfFile() }
    }

    /// Reads `handle` until a line feed (included) or its end, on a thread of its own; the data
    /// read may go past the line feed.
    package static func readFirstLine(_ handle: FileHandle) async -> Data {
        await onOwnThread {
            var data = Data()
            while !data.contains(0x0A) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            return data
        }
    }

    /// Runs `body` on a new thread and suspends until it returns.
    package static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    // MARK: - Run to the end

    /// Runs `executable` with `arguments` to its end and collects both outputs (each read on a
    /// thread of its own, so a child that fills one pipe never blocks); standard input is
    /// `/dev/null`.
    package static func run(
        _ executable: String, _ arguments: [String],
        environment: [String: String] = [:]
    ) async throws -> Output {
        let process = try SpawnedProcess(executable, arguments, environment: environment)
        async let stdout = readToEnd(process.standardOutput!)
        async let stderr = readToEnd(process.standardError!)
        let (out, err) = await (stdout, stderr)
        return Output(termination: await process.wait(), stdout: out, stderr: err)
    }

    /// ``run(_:_:environment:)`` for a caller that is already on a thread of its own (never the
    /// Swift concurrency pool): blocks until the child ends.
    package static func runBlocking(
        _ executable: String, _ arguments: [String],
        environment: [String: String] = [:]
    ) throws -> Output {
        let process = try SpawnedProcess(executable, arguments, environment: environment)
        let errors = Locked(Data())
        let errorsRead = DispatchSemaphore(value: 0)
        let errorHandle = process.standardError!
        Thread.detachNewThread {
            errors.withLock { $0 = errorHandle.readDataToEndOfFile() }
            errorsRead.signal()
        }
        let out = process.standardOutput!.readDataToEndOfFile()
        errorsRead.wait()
        let termination = process.waitBlocking(timeout: .infinity) ?? Termination(status: -1, signalled: false)
        return Output(termination: termination, stdout: out, stderr: errors.current)
    }
}
