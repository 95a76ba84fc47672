#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
import Testing

/// The raw HTTP client and the fixtures the receiver tests share.
extension ReceiverHardeningTests {
    // MARK: - Raw HTTP client

    /// An HTTP answer as read off the socket.
    struct RawResponse {
        var status: Int
        var head: String
        var body: Data
        /// Seconds from connecting to the end of the answer, measured on the exchange's own
        /// thread (not including the wait of the test's task for a concurrency-pool thread).
        var seconds: Double = 0
    }

    /// A request as bytes: request line, `Host`, the given headers, `Content-Length` (unless
    /// the headers say chunked), `Connection: close`, then the body.
    static func rawRequest(_ target: String, method: String = "POST", headers: [(String, String)] = [], body: Data = Data()) -> Data {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !headers.contains(where: { $0.0.lowercased() == "transfer-encoding" }) { text += "Content-Length: \(body.count)\r\n" }
        text += "Connection: close\r\n\r\n"
        return Data(text.utf8) + body
    }

    /// Sends `request` to 127.0.0.1:`port` on a new connection and reads one answer (framed by
    /// its `Content-Length`, else up to the end of the connection), on a thread of its own: not
    /// on a GCD global queue, whose few threads (one per core) also run the cooperative pool the
    /// receivers need, so blocking them would starve every receiver in the process.
    static func exchange(port: UInt16, _ request: Data, timeout: Int = 120) async throws -> RawResponse {
        try await onOwnThread { try exchangeBlocking(port: port, request, timeout: timeout) }
    }

    /// Runs blocking `body` on a new thread (see ``exchange(port:_:timeout:)``).
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    struct SocketFailure: Error, CustomStringConvertible {
        var description: String
    }

    private static func exchangeBlocking(port: UInt16, _ request: Data, timeout: Int) throws -> RawResponse {
        let started = Date()
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let sendFlags = Int32(MSG_NOSIGNAL)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        let sendFlags: Int32 = 0
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard fd >= 0 else { throw SocketFailure(description: "socket() failed: errno \(errno)") }
        defer { close(fd) }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw SocketFailure(description: "connect() failed: errno \(errno)") }
        var sendError: Int32 = 0
        request.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let sent = send(fd, buffer.baseAddress! + offset, buffer.count - offset, sendFlags)
                if sent <= 0 {
                    sendError = errno
                    return
                }  // the server may answer early and close
                offset += sent
            }
        }
        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var expectedTotal: Int?
        while expectedTotal.map({ received.count < $0 }) ?? true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: chunk[0..<count])
            if expectedTotal == nil, let end = received.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
                if let length { expectedTotal = end.upperBound + length }
            }
        }
        guard let end = received.range(of: Data("\r\n\r\n".utf8)) else {
            throw SocketFailure(description: "no answer (\(received.count) bytes; send errno \(sendError))")
        }
        let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
        let statusLine = head.split(separator: "\r\n").first ?? ""
        let pieces = statusLine.split(separator: " ")
        guard pieces.count >= 2, let status = Int(pieces[1]) else {
            throw SocketFailure(description: "bad status line \(String(statusLine).debugDescription)")
        }
        return RawResponse(
            status: status, head: head, body: Data(received[end.upperBound...]),
            seconds: Date().timeIntervalSince(started))
    }

    /// Runs `body` with a fresh receiver, stopped afterwards.
    static func withReceiver<T>(
        limits: FormReceiver.Limits = .default, recordingDirectory: URL? = nil,
        _ body: (FormReceiver) async throws -> T
    ) async throws -> T {
        let receiver = try await FormReceiver.start(limits: limits, recordingDirectory: recordingDirectory)
        do {
            let result = try await body(receiver)
            await receiver.stop()
            return result
        } catch {
            await receiver.stop()
            throw error
        }
    }

    static func multipart(boundary: String = "B", _ parts: [(name: String, fileName: String?, content: Data)]) -> Data {
        var body = Data()
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
            if let fileName = part.fileName { head += "; filename=\"\(fileName)\"\r\nContent-Type: application/octet-stream" }
            body += Data((head + "\r\n\r\n").utf8) + part.content + Data("\r\n".utf8)
        }
        return body + Data("--\(boundary)--\r\n".utf8)
    }

    static func temporaryDirectory(_ label: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("FormDataKit-\(label)-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
