#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import FormDataKitAsyncHTTPClient
import Foundation

/// W5: build and send three files plus ten fields as multipart to a loopback receiver that
/// discards the body — FormDataKit over AsyncHTTPClient (streamed, no spool) and over URLSession
/// (spooled, then sent from the file), against `curl -F` (with and without `Expect:`).
/// Each sender is a child process, so its wall time and peak RSS are its own.
enum SendWorkload {
    static let name = "W5 send"

    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let total = totalMiB << 20
        let sizes = [total / 2, total / 3, total - total / 2 - total / 3]
        let files = try sizes.enumerated().map { index, size in
            try directory.generate("w5-\(index).\(index == 2 ? "txt" : "bin")", size: size, seed: UInt64(index + 5), text: index == 2)
        }
        let receiver = try DiscardReceiver()
        defer { receiver.stop() }
        let url = "http://127.0.0.1:\(receiver.port)/upload"
        let workload = "\(name) \(totalMiB) MiB"
        var rows = [
            ResultRow(workload: workload, tool: "FormDataKit AsyncHTTPClient", bytes: total, seconds: [], peakRSSKiB: 0,
                      note: "build + send, streamed (no temp file)"),
            ResultRow(workload: workload, tool: "FormDataKit URLSession", bytes: total, seconds: [], peakRSSKiB: 0,
                      note: "build (spool) + uploadTask(fromFile:)"),
        ]
        var commands = [
            [selfPath, "--child", "send", "asynchttpclient", url] + files,
            [selfPath, "--child", "send", "urlsession", url] + files,
        ]
        if toolExists("curl") {
            var curl = ["curl", "-sS", "-o", "/dev/null", "--fail"]
            for index in 0..<10 { curl += ["-F", "field\(index)=value \(index)"] }
            for (index, file) in files.enumerated() { curl += ["-F", "file\(index)=@\(file)"] }
            commands.append(curl + [url])
            commands.append(curl + ["-H", "Expect:", url])
            rows.append(ResultRow(workload: workload, tool: "curl -F", bytes: total, seconds: [], peakRSSKiB: 0,
                                  note: "Expect: 100-continue (answered)"))
            rows.append(ResultRow(workload: workload, tool: "curl -F -H 'Expect:'", bytes: total, seconds: [], peakRSSKiB: 0))
        }
        for _ in 0..<runs {
            for (index, command) in commands.enumerated() {
                receiver.reset()
                let child = runMeasured(command)
                guard child.status == 0 else { throw BenchError.childFailed("\(rows[index].tool) exited \(child.status)") }
                let received = receiver.lastBodyBytes
                guard received > total else {
                    throw BenchError.childFailed("\(rows[index].tool): the receiver got \(received) bytes, want > \(total)")
                }
                rows[index].seconds.append(child.seconds)
                rows[index].peakRSSKiB = max(rows[index].peakRSSKiB ?? 0, child.peakRSSKiB)
            }
        }
        return rows
    }

    /// The child: `send <asynchttpclient|urlsession> <url> <file>...` — a form of ten fields and
    /// the files, built and sent once; fails unless the answer is 200.
    static func child(_ arguments: [String]) throws {
        guard arguments.count >= 2, let url = URL(string: arguments[1]) else { throw BenchError.usage("send TRANSPORT URL FILE...") }
        let request = FormDataRequest(url: url)
        switch arguments[0] {
        case "asynchttpclient": request.transport = AsyncHTTPClientTransport.shared
        case "urlsession": request.transport = URLSessionTransport.shared
        default: throw BenchError.usage("unknown transport \(arguments[0])")
        }
        request.timeOutSeconds = 120
        for index in 0..<10 { request.addPostValue("value \(index)", forKey: "field\(index)") }
        for (index, file) in arguments.dropFirst(2).enumerated() { try request.addFile(file, forKey: "file\(index)") }
        request.startSynchronous()
        if let error = request.error { throw BenchError.childFailed("send failed: \(error)") }
        guard request.responseStatusCode == 200 else { throw BenchError.childFailed("status \(request.responseStatusCode)") }
    }
}

/// A loopback HTTP/1.1 receiver that reads each request's `Content-Length` bytes and throws them
/// away (answering `100 Continue` when asked), then answers 200. One thread per connection.
final class DiscardReceiver: @unchecked Sendable {
    // `@unchecked`: `bodyBytes` is guarded by `lock`; the rest is set once in init.
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var bodyBytes = 0

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError.childFailed("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw BenchError.childFailed("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = self.listener
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Thread.detachNewThread { self.serve(connection) }
            }
        }
    }

    /// The body bytes of the last request read completely.
    var lastBodyBytes: Int { lock.withLock { bodyBytes } }

    func reset() { lock.withLock { bodyBytes = 0 } }

    /// Stops accepting connections.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var pending = [UInt8]()
        while true {
            // The head: up to the blank line.
            var headEnd: Int?
            while headEnd == nil {
                if let end = Self.find([13, 10, 13, 10], in: pending) { headEnd = end; break }
                let got = recv(connection, buffer.baseAddress, buffer.count, 0)
                if got <= 0 { return }
                pending += UnsafeRawBufferPointer(rebasing: buffer[0..<got])
            }
            guard let end = headEnd else { return }
            let head = String(decoding: pending[0..<end], as: UTF8.self).lowercased()
            pending.removeFirst(end + 4)
            var contentLength = 0
            var expectContinue = false
            for line in head.split(separator: "\r\n") {
                if line.hasPrefix("content-length:") { contentLength = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0 }
                if line.hasPrefix("expect:") && line.contains("100-continue") { expectContinue = true }
            }
            if expectContinue { Self.sendAll(connection, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
            var left = contentLength - min(contentLength, pending.count)
            pending.removeFirst(min(contentLength, pending.count))
            while left > 0 {
                let got = recv(connection, buffer.baseAddress, min(buffer.count, left), 0)
                if got <= 0 { return }
                left -= got
            }
            lock.withLock { bodyBytes = contentLength }
            let answer = "{\"bytes\":\(contentLength)}"
            Self.sendAll(connection, Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(answer.utf8.count)\r\n\r\n\(answer)".utf8))
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }

    private static func sendAll(_ connection: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }
}
