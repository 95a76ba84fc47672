import FormDataKitBody
import FormDataKitWire
import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a server sent on a connection that nobody read before libcurl closed it, kept for the
/// connections a transfer watches.
///
/// libcurl reads a connection's answers between its sends. When a server's `104` and the loss of
/// the connection arrive together while libcurl is sending a body, the send fails first
/// (`ECONNRESET`, libcurl's code 55) and libcurl closes the connection with the `104` unread in
/// the kernel: the server announced the upload's URL and the client's kernel received it, yet
/// the send would fail as if the server never offered to resume.
///
/// So every easy handle closes its connections' sockets through ``closeSocketCallback`` (a
/// connection keeps the callback of the handle that opened it, whichever transfer uses it last).
/// A resumable upload watches its connection from the moment libcurl begins its request on it
/// (the pre-request callback names both ends); at a watched connection's close the bytes left
/// unread are kept here until the transfer ends and takes them. An unwatched close costs a lock.
final class UnreadAtClose: Sendable {
    /// A connection, by its two ends.
    struct Connection: Hashable, Sendable {
        let localAddress: String
        let localPort: Int
        let remoteAddress: String
        let remotePort: Int
    }

    /// The one watch every libcurl connection closes through.
    static let shared = UnreadAtClose()
    /// The most bytes kept for one connection (interim heads are small).
    static let limit = 16 << 10

    private struct State {
        var watched: Set<Connection> = []
        var unread: [Connection: [UInt8]] = [:]
    }
    private let state = Locked(State())

    /// Keeps what is left unread when `connection` closes.
    func watch(_ connection: Connection) {
        state.withLock { _ = $0.watched.insert(connection) }
    }

    /// Stops watching `connection`; returns what was left unread at its close (empty while it
    /// is open, or when nothing was left).
    func take(_ connection: Connection) -> [UInt8] {
        state.withLock { state in
            state.watched.remove(connection)
            return state.unread.removeValue(forKey: connection) ?? []
        }
    }

    /// libcurl closes `socket`: what is left to read on it is kept first when it is watched.
    fileprivate func close(_ socket: Int32) -> Int32 {
        let connection = state.withLock { state -> Connection? in
            guard !state.watched.isEmpty else { return nil }
            return Self.watchedConnection(of: socket, among: state.watched)
        }
        if let connection {
            let left = Self.readLeft(socket)
            if !left.isEmpty { state.withLock { $0.unread[connection] = left } }
        }
        #if canImport(Glibc)
        return Glibc.close(socket)
        #else
        return Darwin.close(socket)
        #endif
    }

    /// Reads, without waiting, what the kernel holds for `socket` (up to ``limit`` bytes).
    private static func readLeft(_ socket: Int32) -> [UInt8] {
        var left: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while left.count < limit {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { break }
            left += buffer[0..<count]
        }
        return left
    }

    /// The watched connection `socket` is, nil when none. A socket the peer reset has no peer
    /// address any more (`ENOTCONN`): it is then the one watched connection from its local end,
    /// and none when two share that end (to different servers).
    private static func watchedConnection(of socket: Int32, among watched: Set<Connection>) -> Connection? {
        guard let local = address(socket, getsockname) else { return nil }
        if let remote = address(socket, getpeername) {
            let connection = Connection(
                localAddress: local.host, localPort: local.port, remoteAddress: remote.host, remotePort: remote.port)
            return watched.contains(connection) ? connection : nil
        }
        let fromHere = watched.filter { $0.localAddress == local.host && $0.localPort == local.port }
        return fromHere.count == 1 ? fromHere.first : nil
    }

    /// One end of `socket` as `getsockname`/`getpeername` give it: numeric host and port.
    private static func address(
        _ socket: Int32, _ name: (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32
    ) -> (host: String, port: Int)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(socket, $0, &length) }
        }
        guard named == 0 else { return nil }
        let family = Int32(storage.ss_family)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var port = 0
        let written = withUnsafeBytes(of: storage) { raw -> Bool in
            switch family {
            case AF_INET:
                var address = raw.load(as: sockaddr_in.self)
                port = Int(UInt16(bigEndian: address.sin_port))
                return inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil
            case AF_INET6:
                var address = raw.load(as: sockaddr_in6.self)
                port = Int(UInt16(bigEndian: address.sin6_port))
                return inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count)) != nil
            default:
                return false
            }
        }
        guard written else { return nil }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (host, port)
    }
}

/// libcurl's close-socket callback (``UnreadAtClose``): closes `item`, 0 on success.
let curlCloseSocketCallback: ccurl_closesocket_callback = { _, item in
    UnreadAtClose.shared.close(item)
}
