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

/// What `formdata serve` prints: nothing a client sent can drive the operator's terminal.
extension ReceiverHardeningTests {
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
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
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
}
