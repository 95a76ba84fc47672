@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Testing

@testable import FormDataKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A resumable upload's `104` that libcurl left unread when a reset ended its send: the bytes are
/// kept at the connection's close (a real loopback connection, reset by its peer) and the complete
/// interim heads among them are found (a pure function).
@Suite("Curl: interim answers left unread at a connection's close")
struct UnreadAtCloseTests {
    static let interim =
        "HTTP/1.1 104 Upload Resumption Supported\r\nLocation: /resumable_upload/7\r\nUpload-Draft-Interop-Version: 6\r\n\r\n"

    static func heads(_ text: String) -> [[String]] {
        CurlTransfer.completeInterimHeads(in: Array(text.utf8)).map { head in head.map { String(decoding: $0, as: UTF8.self) } }
    }

    @Test("complete 1xx heads are found, in order, each with its lines; parsing stops at a final head, a 101 or a partial head")
    func interimHeads() {
        #expect(
            Self.heads(Self.interim) == [
                [
                    "HTTP/1.1 104 Upload Resumption Supported\r\n", "Location: /resumable_upload/7\r\n",
                    "Upload-Draft-Interop-Version: 6\r\n", "\r\n",
                ]
            ])
        #expect(Self.heads("HTTP/1.1 100 Continue\r\n\r\n" + Self.interim).count == 2)
        #expect(Self.heads("HTTP/1.1 104 x\nLocation: /a\n\n").count == 1)  // bare LF line ends
        #expect(Self.heads(Self.interim + "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n").count == 1)
        #expect(Self.heads(Self.interim + "HTTP/1.1 104 Upload Resumption Supported\r\nLocation: /r").count == 1)
        #expect(Self.heads("HTTP/1.1 104 Upload Resumption Supported\r\nLocation: /resumable_upload/7\r\n").isEmpty)
        #expect(Self.heads("HTTP/1.1 101 Switching Protocols\r\n\r\n").isEmpty)
        #expect(Self.heads("HTTP/1.1 200 OK\r\n\r\n").isEmpty)
        #expect(Self.heads("ion: /resumable_upload/7\r\n\r\n").isEmpty)  // the rest of a head libcurl half read
        #expect(Self.heads("\u{16}\u{03}\u{03}\u{00}\u{20}").isEmpty)  // TLS bytes
        #expect(Self.heads("").isEmpty)
    }

    /// A connected loopback pair: (client, server).
    static func connectedPair() throws -> (client: Int32, server: Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                try #require(bind(listener, raw, length) == 0 && listen(listener, 1) == 0)
                try #require(getsockname(listener, raw, &length) == 0)
            }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        try #require(connected == 0)
        let server = accept(listener, nil, nil)
        try #require(server >= 0)
        return (client, server)
    }

    /// The inode of what descriptor `descriptor` is open on; nil when it is not open.
    static func inode(of descriptor: Int32) -> UInt64? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt64(status.st_ino) : nil
    }

    /// `socket`'s two ends as the pre-request callback names them.
    static func ends(of socket: Int32) -> UnreadAtClose.Connection {
        func end(_ name: (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32) -> (String, Int) {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(socket, $0, &length) }
            }
            var bytes = address.sin_addr
            var text = [CChar](repeating: 0, count: 64)
            _ = inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count))
            return (
                String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                Int(UInt16(bigEndian: address.sin_port))
            )
        }
        let local = end(getsockname)
        let remote = end(getpeername)
        return UnreadAtClose.Connection(localAddress: local.0, localPort: local.1, remoteAddress: remote.0, remotePort: remote.1)
    }

    /// The server sends `bytes`, then resets the connection (SO_LINGER 0); the client's next send
    /// fails with ECONNRESET, as libcurl's did.
    static func sendThenReset(_ bytes: String, server: Int32, client: Int32) throws {
        let sent = Array(bytes.utf8).withUnsafeBytes { send(server, $0.baseAddress, $0.count, 0) }
        try #require(sent == bytes.utf8.count)
        var lingerOption = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(server, SOL_SOCKET, SO_LINGER, &lingerOption, socklen_t(MemoryLayout<linger>.size))
        close(server)
        var probe: UInt8 = 0
        var failure: Int32 = 0
        for _ in 0..<1000 {  // the reset arrives at once on loopback; each try sends a byte
            if send(client, &probe, 1, Int32(MSG_NOSIGNAL)) < 0 {
                failure = errno
                break
            }
            usleep(1000)
        }
        try #require(failure == ECONNRESET || failure == EPIPE, "the client's send after the reset: errno \(failure)")
    }

    @Test("a watched connection reset by its peer: what it sent and nobody read is kept at the close, and the socket is closed")
    func keptAtClose() throws {
        let (client, server) = try Self.connectedPair()
        let connection = Self.ends(of: client)
        UnreadAtClose.shared.watch(connection)
        try Self.sendThenReset(Self.interim, server: server, client: client)
        let socketBefore = Self.inode(of: client)
        #expect(curlCloseSocketCallback(nil, client) == 0)
        // Closed: the number is free (or, in this parallel test process, already another file's).
        #expect(socketBefore != nil && Self.inode(of: client) != socketBefore)
        #expect(String(decoding: UnreadAtClose.shared.take(connection), as: UTF8.self) == Self.interim)
        #expect(UnreadAtClose.shared.take(connection).isEmpty)  // taken once
    }

    @Test("an unwatched connection's close keeps nothing; a watched one still open has nothing to take")
    func unwatchedKeepsNothing() throws {
        let (client, server) = try Self.connectedPair()
        let connection = Self.ends(of: client)
        try Self.sendThenReset(Self.interim, server: server, client: client)
        #expect(curlCloseSocketCallback(nil, client) == 0)
        UnreadAtClose.shared.watch(connection)
        #expect(UnreadAtClose.shared.take(connection).isEmpty)
    }
}
