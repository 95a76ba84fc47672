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

/// Chunked captures: malformed chunk framing in a capture is an error, never a trap.
extension ReceiverHardeningTests {
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
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let directory = try Self.temporaryDirectory("chunk")
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = directory.appendingPathComponent("0001-POST.http")
        try Data(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\na=1\r\n0\r\n\r\n"
                .utf8
        ).write(to: capture)
        let result = try await FormdataTool.run(tool, ["diff", capture.path, capture.path])
        #expect(result.status == 64, "formdata diff: status \(result.status), \(result.output)")
        #expect(result.output.contains("hunk"), "\(result.output)")
    }
}
