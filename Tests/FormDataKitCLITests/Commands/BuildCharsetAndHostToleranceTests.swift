@testable import FormDataKitBody
import FormDataKitTestSupport
import Foundation
import Testing

/// Issue 55, points 8 and 9 on the command line: `formdata build --charset NAME` writes the
/// strings in a legacy charset; `formdata diff --tolerate host` (and `all`) lets the URL's host
/// and port differ; `--verbose` shows GB2312 text as text.
@Suite("formdata build --charset, diff --tolerate host")
struct BuildCharsetAndHostToleranceTests {
    @Test func charsetHostAndDeclaredText() async throws {
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let scratch = NSTemporaryDirectory() + "fdk-build-charset-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let a = "\(scratch)/a.http"
        let b = "\(scratch)/b.http"
        let multipart = "\(scratch)/m.http"
        let form = ["build", "-F", "姓名=张三", "--charset", "gb2312"]
        #expect(
            try await FormdataTool.run(tool, form + ["--urlencoded", "--url", "http://127.0.0.1:40001/upload", "--out", a]).status == 0)
        #expect(
            try await FormdataTool.run(tool, form + ["--urlencoded", "--url", "http://127.0.0.1:40002/upload", "--out", b]).status == 0)
        #expect(try await FormdataTool.run(tool, form + ["--boundary", "one", "--out", multipart]).status == 0)

        let capture = try Data(contentsOf: URL(fileURLWithPath: a))
        #expect(
            capture
                == Data(
                    ("POST /upload HTTP/1.1\r\nHost: 127.0.0.1:40001\r\nContent-Length: 25\r\n"
                        + "Content-Type: application/x-www-form-urlencoded; charset=gb2312\r\n\r\n%D0%D5%C3%FB=%D5%C5%C8%FD").utf8),
            "\(String(decoding: capture, as: UTF8.self))")
        // Multipart: the name and the value as GB2312 bytes (姓名 D0 D5 C3 FB, 张三 D5 C5 C8 FD).
        let body = try Data(contentsOf: URL(fileURLWithPath: multipart))
        #expect(ByteSearch.contains(body, Array("multipart/form-data; charset=gb2312; boundary=one\r\n".utf8)))
        #expect(
            ByteSearch.contains(
                body,
                Array("--one\r\nContent-Disposition: form-data; name=\"".utf8) + [0xD0, 0xD5, 0xC3, 0xFB]
                    + Array("\"\r\n\r\n".utf8) + [0xD5, 0xC5, 0xC8, 0xFD] + Array("\r\n--one--\r\n".utf8)))

        let ports = try await FormdataTool.run(tool, ["diff", a, b, "--verbose"])
        #expect(ports.status == 1)
        #expect(ports.output.contains("url: A \"http://127.0.0.1:40001/upload\" ≠ B \"http://127.0.0.1:40002/upload\""), "\(ports.output)")
        #expect(ports.output.contains("part 1: \"姓名\" = \"张三\""), "\(ports.output)")
        #expect(ports.output.contains("(equivalent with --tolerate host)"), "\(ports.output)")
        for tolerance in ["host", "all", "boundary,host"] {
            let tolerated = try await FormdataTool.run(tool, ["diff", a, b, "--tolerate", tolerance])
            #expect(tolerated.status == 0, "\(tolerance): \(tolerated.output)")
        }

        let unknown = try await FormdataTool.run(tool, ["build", "-F", "a=1", "--charset", "x-no-such-charset"])
        #expect(unknown.status != 0)
        #expect(unknown.output.contains("Unknown charset \"x-no-such-charset\""), "\(unknown.output)")
        let unencodable = try await FormdataTool.run(tool, ["build", "-F", "a=😀", "--charset", "gb2312"])
        #expect(unencodable.status != 0)
        #expect(unencodable.output.contains("'a'"), "\(unencodable.output)")
    }
}
