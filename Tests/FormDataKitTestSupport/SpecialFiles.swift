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
    /// within `seconds`) has written everything and closed it: the bytes, or nil when no writer
    /// came in time. Read to the end, so the writer never meets a closed FIFO (`SIGPIPE`).
    public static func drainWriter(ofFIFO path: String, within seconds: Double = 10) -> Data? {
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
