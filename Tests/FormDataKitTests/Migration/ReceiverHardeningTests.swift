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

/// The security review's findings on the receiver and the capture reader: each request that
/// used to crash the process or make it hold unbounded memory gets a 4xx answer instead.
///
/// Serialized, and hashing only where the test is about hashes: the receivers handle requests on
/// threads of their own, but debug-build hashing and inflation of megabytes take seconds of the
/// two cores every other suite shares.
@Suite("FormReceiver and capture hardening", .serialized)
struct ReceiverHardeningTests {
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

    // MARK: - 1. /delay

    @Test func aHugeDelayIsAnsweredWith400InsteadOfTrapping() async throws {
        try await Self.withReceiver { receiver in
            let answer = try await Self.exchange(port: receiver.port, Self.rawRequest("/delay/99999999999999", method: "GET"))
            #expect(answer.status == 400)
            #expect(answer.seconds < 30)  // answered at once, not after a (capped) wait
            let negative = try await Self.exchange(port: receiver.port, Self.rawRequest("/delay/-5", method: "GET"))
            #expect(negative.status == 400)
            let words = try await Self.exchange(port: receiver.port, Self.rawRequest("/delay/soon", method: "GET"))
            #expect(words.status == 400)
            let fine = try await Self.exchange(port: receiver.port, Self.rawRequest("/delay/10", method: "GET"))
            #expect(fine.status == 200)
        }
    }

    @Test func delayArgumentsAreValidated() {
        #expect(FormReceiver.delayMilliseconds(nil) == 1000)
        #expect(FormReceiver.delayMilliseconds("0") == 0)
        #expect(FormReceiver.delayMilliseconds("2500") == 2500)
        #expect(FormReceiver.delayMilliseconds("60000") == 60_000)
        for bad in ["60001", "99999999999999", "18446744073709551616", "-5", "+5", " 5", "5ms", "", "0x10", "１２"] {
            #expect(FormReceiver.delayMilliseconds(bad) == nil, "\(bad.debugDescription)")
        }
    }

    // MARK: - 2. Memory bounds

    @Test func theLogKeepsTheSizeAndHashOfABigFileButNotItsBytes() async throws {
        try await Self.withReceiver { receiver in
            let big = Data((0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7) })  // over 64 KiB
            let body = Self.multipart([
                ("big", "big.bin", big), ("small", "small.bin", Data([1, 2, 3, 4])), ("note", nil, Data("hi".utf8)),
            ])
            let answer = try await Self.exchange(
                port: receiver.port,
                Self.rawRequest("/upload?sha256=0", headers: [("Content-Type", "multipart/form-data; boundary=B")], body: body))
            #expect(answer.status == 200)
            let form = try #require(receiver.lastRequest?.form)
            let file = try #require(form.file("big"))
            #expect(file.size == big.count)
            #expect(file.sha256 == SHA256.hex(big))
            #expect(file.data.isEmpty, "the log kept \(file.data.count) bytes of the file")
            #expect(form.file("small")?.sha256 == SHA256.hex(Data([1, 2, 3, 4])))
            #expect(form.value("note") == "hi")
        }
    }

    @Test func theLogForgetsTheOldestRequestsBeyondItsLimit() async throws {
        // By default 1000 requests (before the fix: all of them, for ever). Checked with a
        // smaller limit so the test does not send a thousand requests.
        #expect(FormReceiver.Limits.default.logLimit == 1000)
        #expect(FormReceiver.Limits.default.logByteLimit == 64 << 20)
        let limit = 5
        try await Self.withReceiver(limits: FormReceiver.Limits(logLimit: limit)) { receiver in
            for index in 0..<(limit + 3) {
                let answer = try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest(
                        "/n/\(index)?sha256=0", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                        body: Data("i=\(index)".utf8)))
                #expect(answer.status == 200)
            }
            let requests = receiver.requests
            #expect(requests.count == limit)
            #expect(requests.first?.path == "/n/3")
            #expect(receiver.lastRequest?.path == "/n/\(limit + 2)")
        }
    }

    /// A gzip body of `members` members, each 1 MiB of zeros (about 1 KiB compressed).
    static func gzipBomb(members: Int) throws -> Data {
        let member = try DataCompressor.compressData(Data(count: 1 << 20))
        var bomb = Data()
        for _ in 0..<members { bomb += member }
        return bomb
    }

    @Test func aGzipBombIsStoppedWith413() async throws {
        // In a child process: its receiver inflates or parses a lot on the Swift concurrency
        // pool, which this process's other receivers share (they stalled beside it).
        try await Isolation.run(case: "default-limits") {
            try await Self.withReceiver { receiver in
                // ~600 KB that inflates to 600 MiB. To /discard, which keeps nothing (so the test does
                // not copy 256 MiB around): the inflation limit holds there too.
                let bomb = try Self.gzipBomb(members: 600)
                let answer = try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest(
                        "/discard",
                        headers: [
                            ("Content-Type", "multipart/form-data; boundary=B"), ("Content-Encoding", "gzip"),
                        ], body: bomb))
                #expect(answer.status == 413)
                let received = try #require(receiver.lastRequest)
                #expect(received.bodyBytes == bomb.count)
                #expect((received.inflatedBytes ?? 0) < 600 << 20)
                #expect(received.parseError?.reason.contains("limit") == true, "\(String(describing: received.parseError))")
            }
        }
    }

    @Test func tooManyPartsAreAnsweredWith413() async throws {
        // In a child process: its receiver inflates or parses a lot on the Swift concurrency
        // pool, which this process's other receivers share (they stalled beside it).
        try await Isolation.run(case: "default-limits") {
            try await Self.withReceiver { receiver in
                let body = Self.multipart((0..<20_000).map { _ in (name: "f", fileName: String?.none, content: Data("x".utf8)) })
                let answer = try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest("/upload?sha256=0", headers: [("Content-Type", "multipart/form-data; boundary=B")], body: body))
                #expect(answer.status == 413)
                let received = try #require(receiver.lastRequest)
                #expect(received.form == nil)
                #expect(received.parseError?.reason.contains("parts") == true, "\(String(describing: received.parseError))")

                let pairs = Data((0..<20_000).map { "k\($0)=v" }.joined(separator: "&").utf8)
                let encoded = try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest("/upload?sha256=0", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: pairs))
                #expect(encoded.status == 413)
            }
        }
    }

    @Test func hugeHeadersAreAnsweredWith431() async throws {
        // In a child process: its receiver inflates or parses a lot on the Swift concurrency
        // pool, which this process's other receivers share (they stalled beside it).
        try await Isolation.run(case: "default-limits") {
            try await Self.withReceiver { receiver in
                // 48 KB of header fields in 48 lines: over the receiver's 32 KiB limit, under the
                // server's 1 MiB head limit, so the receiver itself answers 431.
                let big = (0..<48).map { ("X-Big-\($0)", String(repeating: "a", count: 1000)) }
                let answer = try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest(
                        "/upload",
                        headers: [
                            ("Content-Type", "application/x-www-form-urlencoded")
                        ] + big, body: Data("a=1".utf8)))
                #expect(answer.status == 431)
                let received = try #require(receiver.lastRequest)
                #expect(received.headers.map { $0.name.utf8.count + $0.value.utf8.count }.reduce(0, +) < 48_000)
                #expect(received.form == nil)
            }
        }
    }

    @Test func customLimitsBoundTheLogAndTheFilesItKeeps() async throws {
        let limits = FormReceiver.Limits(logLimit: 3, logByteLimit: 1 << 20, retainedFileBytes: 10)
        try await Self.withReceiver(limits: limits) { receiver in
            #expect(receiver.limits == limits)
            for index in 0..<5 {
                let body = Self.multipart([
                    ("a", "a.bin", Data(repeating: UInt8(index), count: 8)), ("b", "b.bin", Data(repeating: 9, count: 8)),
                ])
                _ = try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest("/n/\(index)", headers: [("Content-Type", "multipart/form-data; boundary=B")], body: body))
            }
            #expect(receiver.requests.map(\.path) == ["/n/2", "/n/3", "/n/4"])
            let form = try #require(receiver.lastRequest?.form)
            #expect(form.file("a")?.data == Data(repeating: 4, count: 8))  // within the 10-byte budget
            #expect(form.file("b")?.data.isEmpty == true)  // beyond it: size and hash only
            #expect(form.file("b")?.size == 8)
            #expect(form.file("b")?.sha256 == SHA256.hex(Data(repeating: 9, count: 8)))

            // The byte budget: two requests of ~600 KB of fields do not both fit in 1 MiB.
            let field = Data(("v=" + String(repeating: "x", count: 600_000)).utf8)
            for index in 0..<2 {
                _ = try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest("/big/\(index)", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: field))
            }
            #expect(receiver.requests.map(\.path) == ["/big/1"])
            receiver.reset()
            #expect(receiver.requests.isEmpty)
        }
    }

    @Test func smallerInflatePartAndHeaderLimits() async throws {
        let limits = FormReceiver.Limits(maxInflatedBytes: 100_000, maxParts: 3, maxHeaderBytes: 2000)
        try await Self.withReceiver(limits: limits) { receiver in
            // Letters that do not compress much, so inflation stops soon after the limit (it
            // checks every 4 KiB of compressed input).
            var seed: UInt32 = 12345
            let letters = (0..<200_000).map { _ -> UInt8 in
                seed = seed &* 1_103_515_245 &+ 12345
                return UInt8(ascii: "a") + UInt8((seed >> 16) % 26)
            }
            let gzip = try DataCompressor.compressData(Data("a=".utf8) + Data(letters))
            let bomb = try await Self.exchange(
                port: receiver.port,
                Self.rawRequest(
                    "/upload",
                    headers: [
                        ("Content-Type", "application/x-www-form-urlencoded"), ("Content-Encoding", "gzip"),
                    ], body: gzip))
            #expect(bomb.status == 413)
            #expect(receiver.lastRequest?.form == nil)
            #expect((receiver.lastRequest?.inflatedBytes ?? 0) < 200_000)
            // The answer is the request as JSON, its parse error naming the limit.
            let described = try JSONDecoder().decode(ReceivedRequest.self, from: bomb.body)
            #expect(described.parseError?.reason.contains("100000") == true)

            let small = try DataCompressor.compressData(Data("a=1&b=2".utf8))
            let fine = try await Self.exchange(
                port: receiver.port,
                Self.rawRequest(
                    "/upload",
                    headers: [
                        ("Content-Type", "application/x-www-form-urlencoded"), ("Content-Encoding", "gzip"),
                    ], body: small))
            #expect(fine.status == 200)
            #expect(receiver.lastRequest?.form?.value("b") == "2")

            let three = Self.multipart((0..<3).map { (name: "f\($0)", fileName: String?.none, content: Data("x".utf8)) })
            #expect(
                try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest("/upload", headers: [("Content-Type", "multipart/form-data; boundary=B")], body: three)
                ).status == 200)
            let four = Self.multipart((0..<4).map { (name: "f\($0)", fileName: String?.none, content: Data("x".utf8)) })
            #expect(
                try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest("/upload", headers: [("Content-Type", "multipart/form-data; boundary=B")], body: four)
                ).status == 413)
            #expect(
                try await Self.exchange(
                    port: receiver.port,
                    Self.rawRequest(
                        "/upload", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data("a=1&b=2&c=3&d=4".utf8))
                ).status == 413)

            let headers = try await Self.exchange(
                port: receiver.port,
                Self.rawRequest(
                    "/upload",
                    headers: [
                        ("Content-Type", "application/x-www-form-urlencoded"), ("X-Long", String(repeating: "h", count: 2000)),
                    ], body: Data("a=1".utf8)))
            #expect(headers.status == 431)
            #expect(receiver.lastRequest?.headers.isEmpty == true)
            #expect(receiver.lastRequest?.parseError?.reason.contains("2000") == true)
        }
    }

    @Test func partsAreCountedFromDelimitersBeforeParsing() {
        let multipart = "multipart/form-data; boundary=\"xyz\""
        let body = Self.multipart(boundary: "xyz", (0..<5).map { (name: "f\($0)", fileName: String?.none, content: Data("x".utf8)) })
        #expect(FormReceiver.partCountUpperBound(body, contentType: multipart, stoppingAbove: 100) == 5)
        #expect(FormReceiver.partCountUpperBound(body, contentType: multipart, stoppingAbove: 2) == 3)  // stops counting at 4 delimiters
        #expect(FormReceiver.partCountUpperBound(Data(), contentType: multipart, stoppingAbove: 10) == 0)
        #expect(FormReceiver.partCountUpperBound(Data("--xy--x".utf8), contentType: multipart, stoppingAbove: 10) == 0)
        #expect(
            FormReceiver.partCountUpperBound(Data("a=1&b=2&c".utf8), contentType: "application/x-www-form-urlencoded", stoppingAbove: 10)
                == 3)
        #expect(FormReceiver.partCountUpperBound(Data(), contentType: "application/x-www-form-urlencoded", stoppingAbove: 10) == 0)
        #expect(FormReceiver.partCountUpperBound(Data("x".utf8), contentType: "text/plain", stoppingAbove: 10) == nil)
    }

    // MARK: - 3. --record continues the numbering

    @Test func recordingIntoADirectoryWithCapturesContinuesTheNumbering() async throws {
        let directory = try Self.temporaryDirectory("record")
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = ["0001-POST.http": "old one", "0002-PUT.http": "old two", "0007-POST.http": "old seven"]
        for (name, text) in old { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
        try Data("not a capture".utf8).write(to: directory.appendingPathComponent("notes-0099.txt"))

        let first = try await Self.withReceiver(recordingDirectory: directory) { receiver in
            _ = try await Self.exchange(
                port: receiver.port,
                Self.rawRequest("/upload", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data("a=1".utf8)))
            _ = try await Self.exchange(
                port: receiver.port,
                Self.rawRequest(
                    "/upload", method: "PUT", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data("a=2".utf8)))
            return receiver.requests.map { $0.capturePath.map { URL(fileURLWithPath: $0).lastPathComponent } }
        }
        #expect(first == ["0008-POST.http", "0009-PUT.http"])
        // A second receiver on the same directory (a restarted `formdata serve --record`).
        let second = try await Self.withReceiver(recordingDirectory: directory) { receiver in
            _ = try await Self.exchange(
                port: receiver.port,
                Self.rawRequest("/upload", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data("a=3".utf8)))
            return receiver.lastRequest?.capturePath.map { URL(fileURLWithPath: $0).lastPathComponent }
        }
        #expect(second == "0010-POST.http")
        for (name, text) in old {
            #expect(try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) == text, "\(name) was overwritten")
        }
        let snapshot = try FormSnapshot(contentsOfCapture: directory.appendingPathComponent("0010-POST.http"))
        #expect(snapshot.method == "POST")
    }

    @Test func theHighestCaptureNumberIgnoresOtherFiles() throws {
        let directory = try Self.temporaryDirectory("numbers")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(FormReceiver.highestCaptureNumber(in: directory) == 0)
        for name in [
            "0003-POST.http", "0012-PUT.http", ".0099-POST.http.partial", "notes.txt", "x-1.http", "99999999999999999999-POST.http",
            "0020-GET.txt",
        ] {
            try Data().write(to: directory.appendingPathComponent(name))
        }
        #expect(FormReceiver.highestCaptureNumber(in: directory) == 12)
        #expect(FormReceiver.highestCaptureNumber(in: directory.appendingPathComponent("missing")) == 0)
    }

    // MARK: - 4. What `formdata serve` prints

    @Test func terminalEscaping() {
        #expect(FormReceiver.escapedForTerminal("plain text, ünïcödé ✓ \\ \"q\"") == "plain text, ünïcödé ✓ \\ \"q\"")
        #expect(FormReceiver.escapedForTerminal("a\u{1B}[31mred\u{1B}[0m") == "a\\u{1B}[31mred\\u{1B}[0m")
        #expect(FormReceiver.escapedForTerminal("\u{1B}]0;title\u{07}") == "\\u{1B}]0;title\\u{7}")
        #expect(FormReceiver.escapedForTerminal("x\u{9B}2Jy\u{7F}\u{0}") == "x\\u{9B}2Jy\\u{7F}\\u{0}")
        #expect(FormReceiver.escapedForTerminal("l1\r\nl2\tt") == "l1\\u{D}\\u{A}l2\\u{9}t")
        #expect(FormReceiver.escapedForTerminal("l1\r\nl2", keepingNewlines: true) == "l1\\u{D}\nl2")
        #expect(FormReceiver.escapedForTerminal("abc\u{202E}fdp.exe\u{2028}") == "abc\\u{202E}fdp.exe\\u{2028}")
        for value in 0..<0x20 {
            let escaped = FormReceiver.escapedForTerminal(String(UnicodeScalar(UInt8(value))))
            #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 }, "\(value)")
        }
    }

    @Test func theTerminalSummaryEscapesWhatTheClientSent() throws {
        // ReceivedRequest has no public memberwise initializer: decode one, as a client of the
        // receiver's JSON answers would.
        let object: [String: Any] = [
            "method": "PO\u{1B}ST", "path": "/p\u{1B}[2J", "bodyBytes": 1,
            "headers": [["name": "X\u{1B}", "value": "v\u{1B}]0;t\u{07}\u{9B}"]],
            "form": [
                "fields": [["name": "n\u{9B}", "value": "v\u{1B}\n"]],
                "files": [["name": "f", "fileName": "x\u{202E}.bin", "contentType": "t\u{1B}/x", "size": 1, "sha256": "00"]],
            ],
            "parseError": ["offset": 0, "reason": "Not a form content type: \u{1B}[5m\nnext"],
        ]
        let request = try JSONDecoder().decode(ReceivedRequest.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(request.summary.unicodeScalars.contains("\u{1B}"))  // what was printed before
        let text = request.terminalSummary
        #expect(
            !text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" },
            "\(text.debugDescription)")
        #expect(text.contains("X\\u{1B}: v\\u{1B}]0;t\\u{7}\\u{9B}"), "\(text)")
        // The line break in the parse error is escaped; the summary's own lines stay.
        #expect(text.split(separator: "\n").count == request.summary.split(separator: "\n").count - 1)
        #expect(text.contains("\\u{1B}[5m\\u{A}next"), "\(text)")
    }

    @Test func serveDoesNotPassTerminalEscapesThrough() async throws {
        let tool = try #require(CaptureRoundTripTests.tool(), "build the formdata tool first (swift build)")
        let process = try SpawnedProcess(tool.path, ["serve", "--port", "0"], stdout: .pipe, stderr: .null)
        let pipe = process.standardOutput!
        // Blocking reads and waits happen on threads of their own, never on the cooperative pool
        // or GCD's global queues (which the receivers of the tests running in parallel need).
        let output = Locked(Data())
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while true {
                let chunk = pipe.availableData
                if chunk.isEmpty { break }
                output.withLock { $0.append(chunk) }
            }
            finished.signal()
        }
        defer { process.signal(SIGKILL) }
        var port: UInt16?
        for _ in 0..<600 where port == nil {
            let text = String(decoding: output.current, as: UTF8.self)
            if let range = text.range(of: #"127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                port = UInt16(text[range].split(separator: ":")[1])
            } else {
                try await Task.sleep(nanoseconds: 50_000_000)
            }
        }
        let listening = try #require(port, "formdata serve printed \(String(decoding: output.current, as: UTF8.self).debugDescription)")
        let evil = "a\u{1B}]0;owned\u{07}b\u{1B}[2J\u{9B}31mc\rd"
        // Control characters in a header name or value break RFC 9110's field syntax: NIOHTTP1's
        // parser (llhttp) answers 400 before anything is printed.
        let refused = try await Self.exchange(
            port: listening, Self.rawRequest("/upload", headers: [("X-Evil\u{1B}[7m", "v"), ("X-Value", evil)], body: Data()))
        #expect(refused.status == 400)
        // In the body they are the client's data: printed, escaped.
        let body = Self.multipart([
            ("f\u{1B}[1m", "x\u{1B}[5m.bin", Data("z".utf8)), ("v", nil, Data("p\u{1B}[31mq\u{9B}r".utf8)), ("evil", nil, Data(evil.utf8)),
        ])
        let answer = try await Self.exchange(
            port: listening,
            Self.rawRequest("/upload%1B%5B7m", headers: [("Content-Type", "multipart/form-data; boundary=B")], body: body))
        #expect(answer.status == 200)
        for _ in 0..<600 where !String(decoding: output.current, as: UTF8.self).contains("owned") {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        process.signal(SIGTERM)
        _ = await process.wait()
        try await Self.onOwnThread { finished.wait() }
        let printed = output.current
        let text = String(decoding: printed, as: UTF8.self)
        #expect(text.contains("owned"), "\(text.debugDescription)")
        #expect(!printed.contains(0x1B), "ESC reached the terminal: \(text.debugDescription)")
        #expect(!printed.contains(0x07), "BEL reached the terminal: \(text.debugDescription)")
        #expect(!printed.contains(0x0D), "CR reached the terminal: \(text.debugDescription)")
        #expect(!text.unicodeScalars.contains("\u{9B}"), "a C1 CSI reached the terminal: \(text.debugDescription)")
    }

    // MARK: - 5. Chunked captures

    static let chunkedHead =
        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"

    @Test(
        "malformed chunked captures are errors, not traps",
        arguments: [
            "7fffffffffffffff\r\na=1\r\n0\r\n\r\n",
            "7ffffffffffffffe\r\na=1\r\n0\r\n\r\n",
            "ffffffffffffffff\r\na=1\r\n0\r\n\r\n",
            "10000000000000000\r\na=1\r\n0\r\n\r\n",
            "3\r\na=1\r\n7fffffffffffffff\r\n",
            "-3\r\na=1\r\n0\r\n\r\n",
            "+3\r\na=1\r\n0\r\n\r\n",
            "0x3\r\na=1\r\n0\r\n\r\n",
            "\r\na=1\r\n0\r\n\r\n",
            "3\r\na=1",
            "3\r\na=1\r",
            "3\r\na=1xx0\r\n\r\n",
            "4\r\na=1",
            "3\r\na=1\r\n",
            "3\r\na=1\r\n0\r\n",
            "3\r\na=1\r\n0\r\nX-T: 1\r\n",
            "zz\r\n",
        ])
    func malformedChunkedCaptures(_ body: String) throws {
        let data = Data((Self.chunkedHead + body).utf8)
        #expect(throws: FormParseError.self) { try RawHTTPRequest(parsing: data) }
        let directory = try Self.temporaryDirectory("chunks")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("0001-POST.http")
        try data.write(to: file)
        do {
            _ = try FormSnapshot(contentsOfCapture: file)
            Issue.record("\(body.debugDescription) was accepted")
        } catch {
            guard case .malformedCapture(let path, let parseError) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == file.path)
            #expect(parseError.offset >= 0 && parseError.offset <= data.count)
        }
    }

    @Test func wellFormedChunkedCapturesStillParse() throws {
        let capture = try RawHTTPRequest(parsing: Data((Self.chunkedHead + "2;ext=1\r\na=\r\n001 \r\n1\r\n0\r\nX-Trailer: t\r\n\r\n").utf8))
        #expect(capture.body == Data("a=1".utf8))
        let snapshot = try FormSnapshot(capture: capture)
        #expect(snapshot.method == "POST")
        #expect(try RawHTTPRequest(parsing: capture.serialized()) == capture)
    }

    @Test func diffReportsAChunkSizeThatWouldOverflow() async throws {
        let tool = try #require(CaptureRoundTripTests.tool(), "build the formdata tool first (swift build)")
        let directory = try Self.temporaryDirectory("chunk")
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = directory.appendingPathComponent("0001-POST.http")
        try Data(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\na=1\r\n0\r\n\r\n"
                .utf8
        ).write(to: capture)
        let result = try await CaptureRoundTripTests.run(tool, ["diff", capture.path, capture.path])
        #expect(result.status == 64, "formdata diff: status \(result.status), \(result.output)")
        #expect(result.output.contains("hunk"), "\(result.output)")
    }
}
