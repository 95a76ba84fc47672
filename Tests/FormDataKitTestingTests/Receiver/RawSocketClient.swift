#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A hostile HTTP client for the receiver tests: raw TCP to 127.0.0.1 only, blocking calls with
/// bounded waits, meant to run on a thread of its own (``ReceiverHardeningTests/onOwnThread(_:)``).
final class RawSocketClient: @unchecked Sendable {
    // `@unchecked`: `fd` is set once; a client is used by one thread at a time.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What reading until the end of the connection (or a time limit) brought.
    struct Reading {
        var bytes: Data
        /// Whether the server closed the connection (end of stream or reset) within the time.
        var closed: Bool
        var text: String { String(decoding: bytes, as: UTF8.self) }
        /// The status codes of the responses in `bytes`, in order (1xx included): every
        /// `HTTP/1.x NNN ` (a body without a final line break runs into the next status line).
        var statuses: [Int] {
            let text = self.text
            var found: [Int] = []
            var rest = text[...]
            while let range = rest.range(of: #"HTTP/1\.[01] [0-9]{3} "#, options: .regularExpression) {
                found.append(Int(rest[range].dropFirst(9).prefix(3)) ?? 0)
                rest = rest[range.upperBound...]
            }
            return found
        }
    }

    let fd: Int32

    /// Connects to 127.0.0.1:`port`, waiting at most `timeout` seconds.
    init(port: UInt16, timeout: Double = 5) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard fd >= 0 else { throw Failure(description: "socket(): errno \(errno)") }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            guard errno == EINPROGRESS, Self.poll(fd, events: Int16(POLLOUT), timeout: timeout) else {
                close(fd)
                throw Failure(description: "connect() to port \(port) did not complete within \(timeout) s")
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                close(fd)
                throw Failure(description: "connect(): errno \(error)")
            }
        }
        _ = fcntl(fd, F_SETFL, flags)
    }

    deinit { close(fd) }

    private static func poll(_ fd: Int32, events: Int16, timeout: Double) -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            #if canImport(Glibc)
            let ready = Glibc.poll(&entry, 1, left)
            #else
            let ready = Darwin.poll(&entry, 1, left)
            #endif
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }

    /// Sends all of `data`; false when the server closed first.
    @discardableResult
    func send(_ data: Data) -> Bool {
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Bool in
            var offset = 0
            while offset < buffer.count {
                #if canImport(Glibc)
                let sent = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                #else
                let sent = Darwin.send(fd, buffer.baseAddress! + offset, buffer.count - offset, 0)
                #endif
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    func send(_ text: String) { send(Data(text.utf8)) }

    /// Reads until the server closes the connection or `timeout` seconds pass.
    func readUntilClosed(timeout: Double) -> Reading {
        var bytes = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            guard Self.poll(fd, events: Int16(POLLIN), timeout: deadline.timeIntervalSinceNow) else { break }
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return Reading(bytes: bytes, closed: true) }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return Reading(bytes: bytes, closed: false)
    }

    /// Reads until `bytes` holds a complete response head, or `timeout` passes.
    func readHead(timeout: Double) -> Reading {
        var bytes = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0, bytes.range(of: Data("\r\n\r\n".utf8)) == nil {
            guard Self.poll(fd, events: Int16(POLLIN), timeout: deadline.timeIntervalSinceNow) else { break }
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return Reading(bytes: bytes, closed: true) }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return Reading(bytes: bytes, closed: false)
    }
}
