import Foundation
import FormDataKitTestSupport
import FormDataKit
@testable import FormDataKitTesting
import Testing

/// The receiver's HTTP/1.1 server (threads of its own, no Swift concurrency) against an
/// independent client, curl: persistent connections, chunked bodies, `Expect: 100-continue`,
/// a head over the limit.
@Suite("LoopbackHTTPServer (FormReceiver's HTTP) against curl")
struct LoopbackHTTPServerTests {
    static let curl = ["/usr/bin/curl", "/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs curl with `arguments`; its standard output.
    static func curl(_ arguments: [String]) async throws -> String {
        let result = try await SpawnedProcess.run(try #require(curl, "curl is needed"), ["-sS"] + arguments)
        #expect(result.termination.succeeded, "curl \(arguments): \(String(decoding: result.stderr, as: UTF8.self))")
        return String(decoding: result.stdout, as: UTF8.self)
    }

    @Test(
        "two requests on one connection; a chunked body; Expect: 100-continue answered",
        .enabled(if: curl != nil, "needs curl (apt-get install curl)"))
    func keepAliveChunkedAndExpect() async throws {
        let receiver = try await FormReceiver.start()
        defer { Task { await receiver.stop() } }
        // -w prints how many new connections each transfer made: 1, then 0 (reused).
        let connects = try await Self.curl([
            "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects} ",
            receiver.url("/a").absoluteString, receiver.url("/b").absoluteString,
        ])
        #expect(connects.split(separator: " ") == ["1", "0"], "\(connects)")
        #expect(receiver.requests.map(\.path) == ["/a", "/b"])

        let path = NSTemporaryDirectory() + "fdk-loopback-body-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: path) }
        let body = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try body.write(to: URL(fileURLWithPath: path))
        _ = try await Self.curl([
            "-o", "/dev/null", "-H", "Transfer-Encoding: chunked", "-H", "Content-Type: application/octet-stream",
            "--data-binary", "@\(path)", receiver.url("/chunked").absoluteString,
        ])
        let chunked = try #require(receiver.lastRequest)
        #expect(chunked.bodyBytes == body.count)
        #expect(chunked.bodySHA256 == SHA256.hex(body))

        _ = try await Self.curl([
            "-o", "/dev/null", "-H", "Expect: 100-continue", "-F", "f=@\(path)", receiver.url("/expect").absoluteString,
        ])
        let expected = try #require(receiver.lastRequest)
        #expect(expected.header("Expect") == "100-continue")
        #expect(expected.form?.file("f")?.sha256 == SHA256.hex(body))
    }

    @Test("a request head over 1 MiB is answered 431 without reaching the receiver")
    func headOverTheLimit() async throws {
        let receiver = try await FormReceiver.start()
        defer { Task { await receiver.stop() } }
        let headers = (0..<140).map { ("X-Big-\($0)", String(repeating: "x", count: 8000)) }
        let answer = try await ReceiverHardeningTests.exchange(
            port: receiver.port, ReceiverHardeningTests.rawRequest("/big", method: "GET", headers: headers))
        #expect(answer.status == 431)
        #expect(receiver.requests.isEmpty)
    }
}
