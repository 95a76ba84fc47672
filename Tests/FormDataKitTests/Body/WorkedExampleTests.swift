@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// The reference's byte-exact worked example (asi-formdatarequest.md §3.3) and its debug log (§3.4).
@Suite("Worked example and debug log")
struct WorkedExampleTests {
    let B = fixedBoundary

    func workedExample(_ scratch: Scratch, debug: Bool = false, dataInsteadOfFile: Bool = false) throws -> (FormDataRequest, String) {
        let path = try scratch.write("f.txt", "hi")
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        request.shouldLogDebugBody = debug
        request.setPostValue("1", forKey: "a")
        request.setPostValue("x y", forKey: "b")
        if dataInsteadOfFile {
            request.addData(bytes("hi"), forKey: "file")
        } else {
            try request.addFile(path, forKey: "file")
        }
        try request.buildPostBody()
        return (request, path)
    }

    @Test("417 bytes, exactly as ASIFormDataRequest built it")
    func bytesExact() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let (request, _) = try workedExample(scratch)
        let expected =
            "--\(B)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--\(B)\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx y\r\n--\(B)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--\(B)--\r\n"
        let body = try sentBody(request)
        #expect(body == bytes(expected))
        #expect(body.count == 417)
        #expect(request.postLength == 417)
        #expect(
            request.requestHeaders == [
                "Content-Type": "multipart/form-data; charset=utf-8; boundary=\(B)",
                "Content-Length": "417",
            ])
        #expect(request.postFormat == .multipartFormData)
        #expect(request.requestMethod == "POST")
    }

    @Test("addData instead of addFile: filename file, octet-stream, 430 bytes")
    func dataVariant() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let (request, _) = try workedExample(scratch, dataInsteadOfFile: true)
        #expect(request.postLength == 430)
        let text = String(decoding: try sentBody(request), as: UTF8.self)
        #expect(text.contains("name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nhi\r\n"))
    }

    @Test("Without the file: a=1&b=x%20y, 11 bytes, in memory")
    func withoutFile() throws {
        let request = FormDataRequest(url: anyURL)
        request.setPostValue("1", forKey: "a")
        request.setPostValue("x y", forKey: "b")
        try request.buildPostBody()
        #expect(request.postBody == bytes("a=1&b=x%20y"))
        #expect(request.postBodyFilePath == nil)
        #expect(
            request.requestHeaders == [
                "Content-Type": "application/x-www-form-urlencoded; charset=utf-8", "Content-Length": "11",
            ])
    }

    @Test("The ASI length formula holds for values and files")
    func lengthFormula() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let (request, _) = try workedExample(scratch)
        let L = 52
        let values = [("a", "1"), ("b", "x y")].reduce(0) { $0 + 38 + $1.0.utf8.count + 5 + $1.1.utf8.count }
        let files = 38 + 4 + 13 + 5 + 3 + 14 + 10 + 4 + 2
        let parts = 3
        #expect(request.postLength == UInt64((L + 4) + values + files + (parts - 1) * (L + 6) + (L + 8)))
    }

    @Test("Debug log of a multipart body: ASI's markers and placeholders")
    func debugMultipart() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let (request, path) = try workedExample(scratch, debug: true)
        let expected =
            "\r\n==== Building a multipart/form-data body ====\r\n--\(B)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--\(B)\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx y\r\n--\(B)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\n[2 bytes of data from file '\(path)']\r\n--\(B)--\r\n==== End of multipart/form-data body ====\r\n"
        #expect(request.debugBodyString == expected)
    }

    @Test("Debug log of data parts: [N bytes of data]")
    func debugData() throws {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        request.shouldLogDebugBody = true
        request.addData(bytes("hello"), forKey: "d")
        request.addData(nil, forKey: "e")
        try request.buildPostBody()
        let log = try #require(request.debugBodyString)
        #expect(log.contains("\r\n\r\n[5 bytes of data]\r\n--\(B)\r\n"))
        #expect(log.contains("\r\n\r\n[0 bytes of data]\r\n--\(B)--\r\n==== End of multipart/form-data body ====\r\n"))
    }

    @Test("Debug log of a URL-encoded body")
    func debugURLEncoded() throws {
        let request = FormDataRequest(url: anyURL)
        request.shouldLogDebugBody = true
        request.setPostValue("1", forKey: "a")
        request.setPostValue("x y", forKey: "b")
        try request.buildPostBody()
        #expect(
            request.debugBodyString
                == "\r\n==== Building an application/x-www-form-urlencoded body ====\r\na=1&b=x%20y\r\n==== End of application/x-www-form-urlencoded body ====\r\n"
        )
    }

    @Test("No debug log unless switched on")
    func debugOff() throws {
        let request = FormDataRequest(url: anyURL)
        request.setPostValue("1", forKey: "a")
        try request.buildPostBody()
        #expect(request.debugBodyString == nil)
    }
}
