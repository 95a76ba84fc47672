#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// A small HTTP/1.1 server on threads of its own: one thread accepts, one thread serves each
/// connection with blocking reads and writes. ``FormReceiver`` is built on it.
///
/// Why threads and not Swift concurrency: a receiver runs inside test processes whose Swift
/// concurrency pool (one thread per core: two here) is shared by every test running at once. In
/// a full parallel test run, a receiver on that pool waited 20-50 s behind the other tests' jobs
/// before it could accept a connection. On threads of its own it answers whatever the pool is
/// doing.
///
/// What it speaks: request line and header fields (at most ``maximumHeadBytes``), a body framed by
/// `Content-Length` or `Transfer-Encoding: chunked` (trailers read and dropped), `Expect:
/// 100-continue` answered with `100 Continue` before the body is read, persistent connections
/// unless the client says `Connection: close` (or speaks HTTP/1.0 without keep-alive). Every
/// response has a `Content-Length`. A connection idle for ``readTimeout`` seconds is closed.
package final class LoopbackHTTPServer: @unchecked Sendable {
    // `@unchecked`: the lets are set once in init; `connections` and `stopped` are behind `lock`.

    /// One request's head, as read off the connection.
    package struct Request: Sendable {
        /// The method, as sent.
        package var method: String
        /// The request target, as sent (percent-encoded).
        package var target: String
        /// `HTTP/1.1` or `HTTP/1.0`.
        package var version: String
        /// The header fields in the order they came, names as sent.
        package var headers: [(name: String, value: String)]

        /// The path part of the target, still percent-encoded.
        package var encodedPath: String { String(target.prefix { $0 != "?" }) }
        /// The query part of the target (after `?`), still percent-encoded; empty when absent.
        package var encodedQuery: String {
            guard let mark = target.firstIndex(of: "?") else { return "" }
            return String(target[target.index(after: mark)...])
        }
        /// The path, percent-decoded (the encoded one when it does not decode).
        package var path: String { encodedPath.removingPercentEncoding ?? encodedPath }
        /// The query's `name=value` pairs, percent-decoded.
        package var query: [(name: String, value: String)] {
            encodedQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in String(text).removingPercentEncoding ?? String(text) }
                return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
            }
        }

        /// The first value of header `name` (compared without regard to case).
        package func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// What the handler answers.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: Data

        package init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// Answers one request: reads its body from the reader (whatever it leaves unread is read
    /// and dropped afterwards), returns the response. Throwing closes the connection unanswered.
    package typealias Handler = @Sendable (Request, BodyReader) throws -> Response

    /// The most bytes the request line and header fields may take; a longer head is answered 431.
    package static let maximumHeadBytes = 1 << 20
    /// How long a read may wait for the client, in seconds.
    package static let readTimeout = 60

    /// The port it listens on.
    package let port: UInt16
    private let listener: Int32
    private let handler: Handler
    private let lock = NSLock()
    private var connections: Set<Int32> = []
    private var stopped = false
    private let acceptorDone = DispatchSemaphore(value: 0)

    /// A failure to start listening, naming the call and the address.
    package struct StartFailure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Listens on `host` (an IPv4 address) and `port` (0: a free one) and starts accepting.
    package init(host: String, port: UInt16, handler: @escaping Handler) throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw StartFailure(description: "socket(): \(String(cString: strerror(errno)))") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw StartFailure(description: "not an IPv4 address: \(host)")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw StartFailure(description: "bind/listen on \(host):\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: actual.sin_port)
        listener = fd
        self.handler = handler
        let acceptor = Thread { [self] in acceptLoop() }
        acceptor.name = "LoopbackHTTPServer.accept \(self.port)"
        acceptor.start()
    }

    /// Stops accepting, closes open connections and waits for the accepting thread to end
    /// (blocking: call it from a thread of its own, or through ``stop()``).
    package func stopBlocking() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        let open = connections
        lock.unlock()
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        acceptorDone.wait()
        close(listener)
    }

    /// ``stopBlocking()`` without holding a thread of the Swift concurrency pool.
    package func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.stopBlocking()
                continuation.resume()
            }
        }
    }

    private func acceptLoop() {
        defer { acceptorDone.signal() }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // shut down (or broken): stop accepting
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            lock.lock()
            if stopped {
                lock.unlock()
                close(fd)
                return
            }
            connections.insert(fd)
            lock.unlock()
            let thread = Thread { [self] in
                serve(fd)
                lock.lock()
                connections.remove(fd)
                lock.unlock()
                close(fd)
            }
            thread.name = "LoopbackHTTPServer.connection"
            thread.start()
        }
    }

    // MARK: - One connection

    private func serve(_ fd: Int32) {
        var time = timeval(tv_sec: Self.readTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let connection = SocketReader(fd: fd)
        while true {
            let head: Data
            do {
                guard let read = try connection.readHead(limit: Self.maximumHeadBytes) else { return }
                head = read
            } catch SocketReader.Failure.headTooLarge {
                write(fd, Response(status: 431, body: Data("request head over \(Self.maximumHeadBytes) bytes\n".utf8)), close: true)
                lingeringClose(fd)
                return
            } catch {
                return
            }
            guard let request = Self.parseHead(head) else {
                write(fd, Response(status: 400, body: Data("malformed request head\n".utf8)), close: true)
                return
            }
            let framing: BodyReader.Framing
            if request.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                framing = .chunked
            } else if let length = request.header("Content-Length") {
                guard let count = Int(length.trimmingCharacters(in: .whitespaces)), count >= 0 else {
                    write(fd, Response(status: 400, body: Data("bad Content-Length\n".utf8)), close: true)
                    return
                }
                framing = .length(count)
            } else {
                framing = .length(0)
            }
            if request.header("Expect")?.lowercased() == "100-continue" {
                guard send(fd, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
            }
            let body = BodyReader(connection: connection, framing: framing)
            let response: Response
            do {
                response = try handler(request, body)
                try body.drain()
            } catch {
                return  // the body broke off (or the handler gave up): nothing to answer
            }
            let connectionHeader = request.header("Connection")?.lowercased() ?? ""
            let closing =
                connectionHeader.contains("close")
                || (request.version == "HTTP/1.0" && !connectionHeader.contains("keep-alive"))
            guard write(fd, response, close: closing), !closing else { return }
        }
    }

    /// Before closing on a client that is still sending: stops writing, then reads and drops what
    /// comes (at most 16 MiB, at most a second of quiet), so the kernel does not answer the unread
    /// bytes with a reset that would destroy the response before the client reads it.
    private func lingeringClose(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
        var time = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        var total = 0
        while total < 16 << 20 {
            let count = recv(fd, &scratch, scratch.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            total += count
        }
    }

    /// Parses the request line and header fields (`head` without its final empty line).
    static func parseHead(_ head: Data) -> Request? {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        while lines.last == "" { lines.removeLast() }
        guard let first = lines.first else { return nil }
        let parts = first.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[2].hasPrefix("HTTP/1.") else { return nil }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon])
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            headers.append((name, value))
        }
        return Request(method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
    }

    /// Writes `response` (with `Content-Length`, and `Connection: close` when `close`); whether
    /// it all went out.
    @discardableResult
    private func write(_ fd: Int32, _ response: Response, close: Bool) -> Bool {
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        for (name, value) in response.headers
        where name.caseInsensitiveCompare("Content-Length") != .orderedSame && name.caseInsensitiveCompare("Connection") != .orderedSame {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\n"
        if close { head += "Connection: close\r\n" }
        head += "\r\n"
        return send(fd, Data(head.utf8) + response.body)
    }

    private static func reason(_ status: Int) -> String {
        let phrase = HTTPReasonPhrase.phrase(for: status)
        return phrase.isEmpty ? "Status \(status)" : phrase
    }

    private func send(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                let sent = Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                #else
                let sent = Darwin.send(fd, base + offset, raw.count - offset, 0)
                #endif
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }
}

/// Reads a connection through a buffer: heads up to their empty line, then body bytes.
final class SocketReader {
    enum Failure: Error {
        case headTooLarge
        case closed
        case readFailed(Int32)
    }

    private let fd: Int32
    private var buffer = Data()

    init(fd: Int32) { self.fd = fd }

    /// Reads up to 64 KiB more into the buffer; false at the end of the connection.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw Failure.readFailed(errno) }
            if count == 0 { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
    }

    /// The next request head without its final `\r\n\r\n`; nil when the connection ended
    /// cleanly before one started.
    func readHead(limit: Int) throws -> Data? {
        var searchFrom = 0
        while true {
            if let end = buffer.range(of: Data("\r\n\r\n".utf8), in: (buffer.startIndex + searchFrom)..<buffer.endIndex) {
                let head = Data(buffer[buffer.startIndex..<end.lowerBound])
                buffer = Data(buffer[end.upperBound...])
                return head
            }
            guard buffer.count <= limit else { throw Failure.headTooLarge }
            searchFrom = max(0, buffer.count - 3)
            guard try fill() else {
                if buffer.isEmpty { return nil }
                throw Failure.closed
            }
        }
    }

    /// One line (without its CRLF), for chunk sizes and trailers: at most `limit` bytes.
    func readLine(limit: Int = 8 << 10) throws -> String {
        var searchFrom = 0
        while true {
            if let end = buffer.range(of: Data("\r\n".utf8), in: (buffer.startIndex + searchFrom)..<buffer.endIndex) {
                let line = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
                buffer = Data(buffer[end.upperBound...])
                return line
            }
            guard buffer.count <= limit else { throw Failure.headTooLarge }
            searchFrom = max(0, buffer.count - 1)
            guard try fill() else { throw Failure.closed }
        }
    }

    /// Up to `maximum` bytes (at least one); throws at the end of the connection.
    func read(upTo maximum: Int) throws -> Data {
        if buffer.isEmpty {
            // Straight from the socket into the piece returned: no copy through the buffer.
            var piece = Data(count: min(maximum, 64 << 10))
            let count = try piece.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Int in
                while true {
                    let count = recv(fd, raw.baseAddress!, raw.count, 0)
                    if count < 0 && errno == EINTR { continue }
                    if count < 0 { throw Failure.readFailed(errno) }
                    return count
                }
            }
            guard count > 0 else { throw Failure.closed }
            piece.count = count
            return piece
        }
        let count = min(maximum, buffer.count)
        let piece = Data(buffer[buffer.startIndex..<(buffer.startIndex + count)])
        buffer = Data(buffer[(buffer.startIndex + count)...])
        return piece
    }
}

/// The body of one request, read in chunks as the handler asks for them.
package final class BodyReader {
    enum Framing {
        case length(Int)
        case chunked
    }

    /// A body that does not follow its framing.
    package struct Malformed: Error, CustomStringConvertible {
        package var description: String
    }

    private let connection: SocketReader
    private var framing: Framing
    /// Bytes left in the current chunk (chunked) or the body (length).
    private var left: Int
    private var finished = false

    init(connection: SocketReader, framing: Framing) {
        self.connection = connection
        self.framing = framing
        switch framing {
        case .length(let count):
            left = count
            finished = count == 0
        case .chunked:
            left = 0
        }
    }

    /// The next piece of the body (at most 64 KiB), or nil at its end.
    package func next() throws -> Data? {
        guard !finished else { return nil }
        switch framing {
        case .length:
            let piece = try connection.read(upTo: min(left, 64 << 10))
            left -= piece.count
            if left == 0 { finished = true }
            return piece
        case .chunked:
            if left == 0 {
                let line = try connection.readLine()
                let digits = line.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
                // At most 15 hex digits: a size that fits an Int with room to spare.
                guard !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16) else {
                    throw Malformed(description: "bad chunk size line \(line.debugDescription)")
                }
                if size == 0 {
                    while try !connection.readLine().isEmpty {}  // trailers
                    finished = true
                    return nil
                }
                left = size
            }
            let piece = try connection.read(upTo: min(left, 64 << 10))
            left -= piece.count
            if left == 0 {
                guard try connection.readLine().isEmpty else { throw Malformed(description: "chunk not followed by CRLF") }
            }
            return piece
        }
    }

    /// Reads and drops the rest of the body.
    func drain() throws {
        while try next() != nil {}
    }
}
