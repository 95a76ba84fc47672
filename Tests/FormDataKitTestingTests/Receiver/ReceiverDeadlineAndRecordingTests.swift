import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// Issue 24: slow clients are dropped at the receiver's deadlines (made short here, so the test
/// is quick: the deadline is the configuration, not the test's timing), and recording is bounded
/// and private.
@Suite("Receiver: deadlines and recording limits")
struct ReceiverDeadlineAndRecordingTests {
    static let quick = FormReceiver.Limits(headDeadline: 0.5, bodyIdleDeadline: 0.5)

    @Test("a client that sends its head a byte at a time, too slowly, is answered 408 and dropped")
    func slowHeadIsDropped() async throws {
        try await ReceiverHardeningTests.withReceiver(limits: Self.quick) { receiver in
            let port = receiver.port
            let (reading, sent, seconds) = try await ReceiverHardeningTests.onOwnThread {
                let client = try RawSocketClient(port: port)
                let started = Date()
                // One byte a second: each byte keeps the connection busy, none completes the head.
                var sent = 0
                var reading = RawSocketClient.Reading(bytes: Data(), closed: false)
                for byte in "POST /slow HTTP/1.1\r\nHost: x\r\n".utf8 where !reading.closed {
                    client.send(Data([byte]))
                    sent += 1
                    reading = client.readUntilClosed(timeout: 1)
                }
                return (reading, sent, Date().timeIntervalSince(started))
            }
            #expect(reading.closed, "still connected after \(sent) bytes")
            #expect(reading.statuses == [408], "\(reading.text.debugDescription)")
            // The head deadline (0.5 s) counts from the connection, not from the last byte: one that
            // each byte renewed would let all 31 bytes (31 s) through. It was "at most 3 bytes";
            // ten (ten seconds, twenty deadlines) leave a busy machine's event loop room to be late.
            #expect(sent <= 10, "dropped only after \(sent) bytes, \(seconds) s")
            #expect(receiver.requests.isEmpty)
        }
    }

    @Test("a client that stops in the middle of its body is answered 408 and dropped")
    func idleBodyIsDropped() async throws {
        try await ReceiverHardeningTests.withReceiver(limits: Self.quick) { receiver in
            let port = receiver.port
            let reading = try await ReceiverHardeningTests.onOwnThread {
                let client = try RawSocketClient(port: port)
                client.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\na=12345")
                return client.readUntilClosed(timeout: 10)
            }
            #expect(reading.closed)
            #expect(reading.statuses == [408], "\(reading.text.debugDescription)")
            #expect(receiver.requests.isEmpty)
            // The receiver goes on serving.
            let after = try await ReceiverHardeningTests.exchange(
                port: port, ReceiverHardeningTests.rawRequest("/after", method: "GET"), timeout: 10)
            #expect(after.status == 200)
        }
    }

    @Test("an idle keep-alive connection is closed at the head deadline without an answer (a 408 would answer the client's next request)")
    func idleKeepAliveIsClosedSilently() async throws {
        try await ReceiverHardeningTests.withReceiver(limits: Self.quick) { receiver in
            let port = receiver.port
            let (first, after) = try await ReceiverHardeningTests.onOwnThread {
                () throws -> (RawSocketClient.Reading, RawSocketClient.Reading) in
                let client = try RawSocketClient(port: port)
                client.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
                let first = client.readHead(timeout: 10)
                return (first, client.readUntilClosed(timeout: 10))
            }
            // What came, and whether the receiver had closed, say which side was late if this fails.
            #expect(first.statuses == [200], "\(first.text.debugDescription), closed: \(first.closed)")
            #expect(after.closed, "\(after.text.debugDescription)")
            #expect(after.statuses.isEmpty, "\(after.text.debugDescription)")
        }
    }

    @Test("connections over the limit are answered 503; the server goes on accepting")
    func connectionLimit() async throws {
        // The head deadline is not under test: an hour, so that the held connections stay open
        // however long this test waits for a thread.
        let limits = FormReceiver.Limits(maxConnections: 2, headDeadline: 3600)
        try await ReceiverHardeningTests.withReceiver(limits: limits) { receiver in
            let port = receiver.port
            let (held, refused) = try await ReceiverHardeningTests.onOwnThread {
                () throws -> ([RawSocketClient], RawSocketClient.Reading) in
                let held = [try RawSocketClient(port: port), try RawSocketClient(port: port)]
                for client in held {
                    // An answer shows the connection was admitted (not a wait on the clock).
                    client.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
                    guard client.readHead(timeout: 10).statuses == [200] else { throw RawSocketClient.Failure(description: "not served") }
                }
                let third = try RawSocketClient(port: port)
                return (held, third.readUntilClosed(timeout: 10))
            }
            #expect(refused.statuses == [503] && refused.closed, "\(refused.text.debugDescription)")
            _ = held
            let reading = try await ReceiverHardeningTests.onOwnThread { () -> RawSocketClient.Reading in
                held[0].send("GET /held HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return held[0].readUntilClosed(timeout: 10)
            }
            #expect(reading.statuses == [200])
        }
    }

    @Test("a body over maxBodyBytes is answered 413 and the connection closed")
    func bodyLimit() async throws {
        try await ReceiverHardeningTests.withReceiver(limits: FormReceiver.Limits(maxBodyBytes: 1000)) { receiver in
            let declared = try await ReceiverHardeningTests.exchange(
                port: receiver.port, ReceiverHardeningTests.rawRequest("/big", body: Data(count: 1001)), timeout: 10)
            #expect(declared.status == 413)
            let port = receiver.port
            let chunked = try await ReceiverHardeningTests.onOwnThread { () throws -> RawSocketClient.Reading in
                let client = try RawSocketClient(port: port)
                client.send("POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in 0..<3 { client.send("200\r\n" + String(repeating: "x", count: 512) + "\r\n") }
                return client.readUntilClosed(timeout: 10)
            }
            #expect(chunked.statuses == [413] && chunked.closed, "\(chunked.text.debugDescription)")
            #expect(receiver.requests.isEmpty)
        }
    }

    // MARK: - Recording

    static func post(_ receiver: FormReceiver, _ path: String, bytes: Int) async throws -> ReceivedRequest? {
        let body = Data("v=".utf8) + Data(repeating: UInt8(ascii: "x"), count: bytes)
        _ = try await ReceiverHardeningTests.exchange(
            port: receiver.port,
            ReceiverHardeningTests.rawRequest(
                path, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Basic c2VjcmV0")], body: body),
            timeout: 30)
        return receiver.lastRequest
    }

    @Test("captures: 0600 in a 0700 directory, none over --record-max, none past the total, never /discard")
    func recordingLimits() async throws {
        let parent = try ReceiverHardeningTests.temporaryDirectory("record-limits")
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("captures")
        let limits = FormReceiver.Limits(maxCaptureBytes: 1500, maxRecordedBytes: 2200)
        let lines = Locked([String]())
        let receiver = try await FormReceiver.start(
            limits: limits, recordingDirectory: directory, log: { line in lines.withLock { $0.append(line) } })
        let small = try await Self.post(receiver, "/small", bytes: 500)
        let big = try await Self.post(receiver, "/big", bytes: 5000)
        let discarded = try await Self.post(receiver, "/discard", bytes: 500)
        let second = try await Self.post(receiver, "/second", bytes: 500)
        let third = try await Self.post(receiver, "/third", bytes: 500)
        let fourth = try await Self.post(receiver, "/fourth", bytes: 500)
        await receiver.stop()

        #expect(small?.capturePath != nil)
        #expect(big?.capturePath == nil, "a request over maxCaptureBytes was recorded")
        #expect(big?.bodyBytes == 5002, "the request itself is still received")
        #expect(discarded?.path == "/discard" && discarded?.capturePath == nil, "/discard was recorded")
        #expect(second?.capturePath != nil)
        // Captures of about 650 bytes each: three fit in 2200 bytes, a fourth does not.
        #expect(third?.capturePath != nil)
        #expect(fourth?.capturePath == nil, "recording went past maxRecordedBytes")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names.allSatisfy { $0.hasSuffix(".http") }, "\(names)")
        let total = try names.reduce(0) {
            try $0 + (FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent($1).path)[.size] as? Int ?? 0)
        }
        #expect(total <= 2200)
        #expect(lines.current.contains { $0.contains("--record-max") }, "\(lines.current)")
        #expect(lines.current.contains { $0.contains("--record-total-max") }, "\(lines.current)")

        let directoryMode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700, "directory mode \(String(directoryMode ?? 0, radix: 8))")
        for name in names {
            let mode =
                try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name): mode \(String(mode ?? 0, radix: 8))")
        }
        // The capture keeps the credentials (it is the request as sent); what is printed does not.
        let capture = try FormSnapshot(contentsOfCapture: try #require(small?.capturePath.map { URL(fileURLWithPath: $0) }))
        #expect(capture.method == "POST")
    }

    @Test("Authorization, Cookie and Proxy-Authorization values are redacted in what serve prints")
    func redaction() throws {
        let object: [String: Any] = [
            "method": "POST", "path": "/p", "bodyBytes": 0,
            "headers": [
                ["name": "authorization", "value": "Basic c2VjcmV0"], ["name": "Cookie", "value": "session=abc"],
                ["name": "Proxy-Authorization", "value": "Basic cHJveHk="], ["name": "X-Other", "value": "visible"],
            ],
        ]
        let request = try JSONDecoder().decode(ReceivedRequest.self, from: JSONSerialization.data(withJSONObject: object))
        let text = request.redactingSecrets().terminalSummary
        for secret in ["c2VjcmV0", "session=abc", "cHJveHk="] { #expect(!text.contains(secret), "\(text)") }
        #expect(text.contains("authorization: [redacted, 14 bytes]"), "\(text)")
        #expect(text.contains("X-Other: visible"))
        #expect(request.terminalSummary.contains("c2VjcmV0"))  // --show-secrets prints them
    }

    @Test("a trailing closure given to FormReceiver.start is still onRequest (log: comes after it)")
    func trailingClosureIsOnRequest() async throws {
        let paths = Locked([String]())
        let receiver = try await FormReceiver.start { request in paths.withLock { $0.append(request.path) } }
        _ = try await ReceiverHardeningTests.exchange(
            port: receiver.port, ReceiverHardeningTests.rawRequest("/seen", method: "GET"), timeout: 30)
        await receiver.stop()
        #expect(paths.current == ["/seen"])
    }
}
