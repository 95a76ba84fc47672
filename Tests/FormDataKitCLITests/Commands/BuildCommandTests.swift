@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import FormDataKitTestSupport
import Foundation
import Testing
@testable import FormDataKit

/// `formdata build`: the same form built twice with different boundaries diffs as equivalent;
/// gzip shows only as the Content-Encoding header (the body is inflated first); a different
/// value is a difference.
@Suite("formdata build + diff")
struct BuildCommandTests {
    @Test func buildsCapturesThatDiffReads() async throws {
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let scratch = NSTemporaryDirectory() + "fdk-build-command-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        // 70 kB of varied bytes (consecutive bytes always differ, so never "--one").
        let photo = "\(scratch)/photo.jpg"
        try Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }).write(to: URL(fileURLWithPath: photo))
        let a = "\(scratch)/a.http"
        let b = "\(scratch)/b.http"
        let c = "\(scratch)/c.http"
        let zipped = "\(scratch)/z.http"
        let common = ["build", "-F", "name=Ada", "-F", "photo=@\(photo);type=image/jpeg"]
        #expect(try await FormdataTool.run(tool, common + ["--boundary", "one", "--out", a]).status == 0)
        #expect(try await FormdataTool.run(tool, common + ["--out", b]).status == 0)
        #expect(try await FormdataTool.run(tool, common + ["--gzip", "--out", zipped]).status == 0)
        #expect(
            try await FormdataTool.run(tool, ["build", "-F", "name=Bob", "-F", "photo=@\(photo);type=image/jpeg", "--out", c])
                .status == 0)

        let capture = try Data(contentsOf: URL(fileURLWithPath: a))
        #expect(String(decoding: capture.prefix(60), as: UTF8.self).hasPrefix("POST /upload HTTP/1.1\r\nHost: localhost\r\n"))
        #expect(
            ByteSearch.contains(
                capture, Array("\r\n\r\n--one\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nAda\r\n--one\r\n".utf8)))

        let same = try await FormdataTool.run(tool, ["diff", a, b])
        #expect(same.status == 0, "\(same.output)")
        let gzip = try await FormdataTool.run(tool, ["diff", a, zipped])
        #expect(gzip.status == 1)
        #expect(gzip.output.contains("1 difference") && gzip.output.contains("Content-Encoding"), "\(gzip.output)")
        let different = try await FormdataTool.run(tool, ["diff", a, c])
        #expect(different.status == 1)
        #expect(different.output.contains("name"))

        let bodyOnly = "\(scratch)/body"
        #expect(try await FormdataTool.run(tool, common + ["--boundary", "one", "--body-only", "--out", bodyOnly]).status == 0)
        let body = try Data(contentsOf: URL(fileURLWithPath: bodyOnly))
        #expect(capture.suffix(body.count) == body)
        #expect(body.prefix(7) == Data("--one\r\n".utf8))
    }
}
