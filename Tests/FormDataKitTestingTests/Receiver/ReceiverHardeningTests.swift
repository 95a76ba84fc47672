#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
@testable import FormDataKitTesting
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
}
