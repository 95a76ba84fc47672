#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Paths that exist but are not regular files, for the tests that a file part must be one: a
/// FIFO and a listening Unix socket in a fresh directory, `/dev/zero`, and `/proc/self/status`
/// (a regular-looking file of size 0 whose content the kernel makes when it is read).
public final class SpecialFiles {
    /// The scratch directory holding ``fifo`` and ``socket``.
    public let directory: String
    /// A named pipe nobody writes to (opening it to read would block).
    public let fifo: String
    /// A Unix socket bound (and listening) at this path.
    public let socket: String
    /// A character device that never ends.
    public let device = "/dev/zero"
    /// A procfs file: `st_size` 0, readable.
    public let procFile = "/proc/self/status"
    private let socketDescriptor: Int32

    /// Makes the FIFO and the socket (short paths: a socket path has at most 107 bytes).
    public init() throws {
        directory = "/tmp/fdk-special-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        fifo = directory + "/pipe"
        socket = directory + "/sock"
        guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        #if canImport(Glibc)
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = Darwin.socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        socketDescriptor = descriptor
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(socket.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes.prefix(raw.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(socketDescriptor)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Each path with the kind ``FormDataError/notARegularFile(path:kind:)`` names.
    public var all: [(path: String, kind: String)] {
        [(fifo, "FIFO"), (device, "character device"), (socket, "socket"), (procFile, "procfs file")]
    }

    /// Replaces the file at `path` with a FIFO (as if someone swapped it after it was added).
    public static func replaceWithFIFO(_ path: String) throws {
        try FileManager.default.removeItem(atPath: path)
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Reads the FIFO at `path` until the writer blocked opening it (or the next one to open it
    /// within `seconds`; a minute by default, ten times what a busy machine takes to get a
    /// writer there) has written everything and closed it: the bytes, or nil when no writer
    /// came in time. Read to the end, so the writer never meets a closed FIFO (`SIGPIPE`).
    public static func drainWriter(ofFIFO path: String, within seconds: Double = 60) -> Data? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var sawWriter = false
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            let got = read(descriptor, &buffer, buffer.count)
            if got > 0 {
                sawWriter = true
                data.append(contentsOf: buffer[0..<got])
            } else if got == 0, entry.revents & Int16(POLLHUP) != 0 {
                return data  // a writer came and closed (Linux reports no hang-up before one came)
            } else if got < 0, errno != EAGAIN, errno != EINTR {
                return sawWriter ? data : nil
            }
        }
        return sawWriter ? data : nil
    }

    /// Waits until a thread of this process is blocked opening the FIFO at `path` (for writing,
    /// with no reader yet, or for reading with no writer), looking every 5 ms; false when none
    /// was within `seconds`. The event a test used to hope a fixed sleep had brought: the kernel
    /// shows such a thread's wait channel as `wait_for_partner`, and its `open`/`openat` call's
    /// path argument (read back from this process's memory) names the FIFO. On a system
    /// without `/proc` (not Linux) it cannot look, and returns true at once.
    public static func waitForThreadBlockedOpening(fifo path: String, within seconds: Double = 60) -> Bool {
        #if os(Linux)
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if threadBlockedOpening(fifo: path) { return true }
            usleep(5_000)
        } while Date() < deadline
        return false
        #else
        return true
        #endif
    }

    #if os(Linux)
    /// Whether a thread of this process waits in the kernel for the other end of the FIFO at `path`.
    private static func threadBlockedOpening(fifo path: String) -> Bool {
        let wanted = Array(path.utf8) + [0]
        let memory = open("/proc/self/mem", O_RDONLY)
        guard memory >= 0 else { return false }
        defer { close(memory) }
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            let base = "/proc/self/task/\(task)/"
            guard (try? String(contentsOfFile: base + "wchan", encoding: .utf8)) == "wait_for_partner",
                let syscall = try? String(contentsOfFile: base + "syscall", encoding: .utf8)
            else { continue }
            // "<number> <arg1> <arg2> …": the path is the first argument of open, the second of openat.
            let arguments = syscall.split(separator: " ").dropFirst().prefix(2)
            for argument in arguments {
                guard let address = UInt64(argument.dropFirst(2), radix: 16), address > 4096 else { continue }
                var bytes = [UInt8](repeating: 0, count: wanted.count)
                let read = pread(memory, &bytes, bytes.count, off_t(Int64(bitPattern: address)))
                if read == wanted.count, bytes == wanted { return true }
            }
        }
        return false
    }
    #endif

    /// Opens the FIFO at `path` for writing and closes it at once: a reader blocked opening it
    /// (old code) gets in and reads the end. Returns whether a reader was there.
    @discardableResult
    public static func releaseReaders(ofFIFO path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }
}
