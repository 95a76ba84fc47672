#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// `formdata-bench --child delay-relay ADDRESS UPSTREAM_HOST UPSTREAM_PORT DELAY_MS JITTER_MS HOLD_BYTES`:
/// the delay scenario's link latency (this kernel has no `netem`). A TCP relay, run inside the
/// fault lab's server namespace (`ip netns exec`), listening on ADDRESS (a port it picks,
/// announced as `PORT n`), each connection relayed to UPSTREAM_HOST:UPSTREAM_PORT. Every chunk
/// read from either side is held DELAY_MS ± JITTER_MS (uniform) from its arrival before it is
/// written on, and never before the chunk ahead of it (order is kept per connection and
/// direction, so a chunk may wait longer than its own draw). At most HOLD_BYTES are held per
/// connection and direction: past that it stops reading, so a bulk transfer goes at most
/// HOLD_BYTES per delay, as a window over a link with that latency does. An end or a reset on
/// one side ends the other once what is held is written. It serves until its standard input
/// closes. The relay terminates TCP: loss on the link (nft) is recovered on the hop it happens
/// on, while the delay applies to the byte stream.
enum DelayRelay {
    /// The relay's settings.
    struct Settings: Sendable {
        var upstreamHost: String
        var upstreamPort: UInt16
        var delayNanoseconds: Int64
        var jitterNanoseconds: Int64
        var holdBytes: Int
    }

    static func child(_ arguments: [String]) throws {
        guard arguments.count == 6, let port = UInt16(arguments[2]), let delay = Int64(arguments[3]), let jitter = Int64(arguments[4]),
            let hold = Int(arguments[5])
        else { throw BenchError.usage("delay-relay ADDRESS UPSTREAM_HOST UPSTREAM_PORT DELAY_MS JITTER_MS HOLD_BYTES") }
        let settings = Settings(
            upstreamHost: arguments[1], upstreamPort: port, delayNanoseconds: delay * 1_000_000, jitterNanoseconds: jitter * 1_000_000,
            holdBytes: max(1 << 16, hold))
        let listener = try listen(on: arguments[0])
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                Thread.detachNewThread { relay(client, settings) }
            }
        }
        FileHandle.standardOutput.write(Data("PORT \(UInt16(bigEndian: address.sin_port))\n".utf8))
        while FileHandle.standardInput.availableData.count > 0 {}
        close(listener)
    }

    /// A listening socket on `host` (an IPv4 address), any port.
    private static func listen(on host: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError.childFailed("delay-relay: socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = try socketAddress(host, port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 1024) == 0 else {
            throw BenchError.childFailed("delay-relay: bind/listen \(host): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    private static func socketAddress(_ host: String, port: UInt16) throws -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw BenchError.usage("delay-relay: not an IPv4 address: \(host)") }
        return address
    }

    /// Relays one accepted connection: connects upstream, then a held pipe each way.
    private static func relay(_ client: Int32, _ settings: Settings) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard upstream >= 0, var address = try? socketAddress(settings.upstreamHost, port: settings.upstreamPort),
            withUnsafePointer(
                to: &address,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }) == 0
        else {
            if upstream >= 0 { close(upstream) }
            close(client)
            return
        }
        var one: Int32 = 1
        for fd in [client, upstream] { setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let connection = RelayConnection(client: client, upstream: upstream)
        for (from, to) in [(client, upstream), (upstream, client)] {
            let pipe = HeldPipe(from: from, to: to, settings: settings, connection: connection)
            Thread.detachNewThread { pipe.read() }
            Thread.detachNewThread { pipe.write() }
        }
    }
}

/// The two sockets of a relayed connection, closed once the four threads of its two directions
/// are done.
final class RelayConnection: @unchecked Sendable {
    // `@unchecked`: `open` is touched only under `lock`.
    private let lock = NSLock()
    private var open = 4
    let client: Int32
    let upstream: Int32

    init(client: Int32, upstream: Int32) {
        (self.client, self.upstream) = (client, upstream)
    }

    /// A direction failed (a reset, a write error): both sockets stop, so every thread ends.
    func abort() {
        shutdown(client, Int32(SHUT_RDWR))
        shutdown(upstream, Int32(SHUT_RDWR))
    }

    /// A reader or writer is done; the last one closes both sockets.
    func directionDone() {
        let last = lock.withLock { () -> Bool in
            open -= 1
            return open == 0
        }
        if last {
            close(client)
            close(upstream)
        }
    }
}

/// One direction of a relayed connection: a reader that holds what it reads, stamped with when it
/// may go, and a writer that sends each chunk at its time, in order.
final class HeldPipe: @unchecked Sendable {
    // `@unchecked`: `chunks`, `held`, `ended` and `lastRelease` are touched only under `condition`.
    private let condition = NSCondition()
    private var chunks: [(release: UInt64, data: [UInt8])] = []
    private var head = 0
    private var held = 0
    private var ended = false
    private var lastRelease: UInt64 = 0
    private let from: Int32
    private let to: Int32
    private let settings: DelayRelay.Settings
    private let connection: RelayConnection

    init(from: Int32, to: Int32, settings: DelayRelay.Settings, connection: RelayConnection) {
        (self.from, self.to, self.settings, self.connection) = (from, to, settings, connection)
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func read() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            condition.withLock { while held >= settings.holdBytes && !ended { condition.wait() } }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(from, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            let jitter = settings.jitterNanoseconds > 0 ? Int64.random(in: -settings.jitterNanoseconds...settings.jitterNanoseconds) : 0
            let wait = UInt64(max(0, settings.delayNanoseconds + jitter))
            condition.withLock {
                lastRelease = max(Self.now() + wait, lastRelease)
                chunks.append((lastRelease, Array(buffer[0..<count])))
                held += count
                condition.broadcast()
            }
        }
        condition.withLock {
            ended = true
            condition.broadcast()
        }
        connection.directionDone()
    }

    func write() {
        var failed = false
        while true {
            let next = condition.withLock { () -> (release: UInt64, data: [UInt8])? in
                while head == chunks.count && !ended { condition.wait() }
                return head < chunks.count ? chunks[head] : nil
            }
            guard let next else { break }
            let now = Self.now()
            if next.release > now { usleep(useconds_t(min(UInt64(UInt32.max), (next.release - now) / 1000))) }
            if !writeAll(next.data) {
                failed = true
                break
            }
            condition.withLock {
                held -= next.data.count
                head += 1
                if head > 1024 {
                    chunks.removeFirst(head)
                    head = 0
                }
                condition.broadcast()
            }
        }
        if failed {
            connection.abort()
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        } else {
            shutdown(to, Int32(SHUT_WR))
        }
        connection.directionDone()
    }

    private func writeAll(_ data: [UInt8]) -> Bool {
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { send(to, $0.baseAddress! + offset, data.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
