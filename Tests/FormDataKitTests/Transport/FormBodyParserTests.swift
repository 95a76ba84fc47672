import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

@Suite("Strict form parser and SHA-256 of FormDataKitTesting")
struct FormBodyParserTests {
    static let boundary = "XyZ"
    static let contentType = "multipart/form-data; boundary=XyZ"

    static func body(_ text: String) -> Data { Data(text.utf8) }

    @Test("SHA-256 matches the FIPS 180-4 test vectors, in one piece or many")
    func sha256Vectors() {
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA256.hex(long) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var pieces = SHA256()
        for byte in Data(repeating: 0x61, count: 1_000) { pieces.update(Data([byte])) }
        #expect(pieces.hexDigest == SHA256.hex(Data(repeating: 0x61, count: 1_000)))
    }

    @Test("parses FormDataKit's own multipart output, binary content included")
    func roundTrip() throws {
        let request = FormDataRequest(url: URL(string: "http://example.com")!)
        request.setPostValue("Grüße\r\n--XyZ not a boundary", forKey: "text")
        request.addData(
            Data((0...255).map { UInt8($0) }), withFileName: "all.bin", andContentType: "application/octet-stream", forKey: "bin")
        request.postFormat = .multipartFormData
        try request.buildPostBody()
        let body = try Data(contentsOf: URL(fileURLWithPath: try #require(request.postBodyFilePath)))
        let form = try FormBodyParser.parse(
            body, contentType: try #require(request.requestHeaders["Content-Type"]),
            expectedLength: Int(request.postLength))
        #expect(form.value("text") == "Grüße\r\n--XyZ not a boundary")
        #expect(form.file("bin")?.data == Data((0...255).map { UInt8($0) }))
        #expect(form.file("bin")?.fileName == "all.bin")
    }

    @Test("a backslash in a name or filename reads back as itself (the encoder leaves it raw), Shift_JIS 0x5C included")
    func backslashesAgree() throws {
        let request = FormDataRequest(url: URL(string: "http://example.com")!)
        request.setPostValue("v", forKey: "a\\b\\\\c")
        request.addData(Data("x".utf8), withFileName: "C:\\dir\\f.txt", andContentType: "text/plain", forKey: "up\\load")
        request.postFormat = .multipartFormData
        try request.buildPostBody()
        let body = try #require(request.bodySource).readAll()
        let form = try FormBodyParser.parse(
            body, contentType: try #require(request.requestHeaders["Content-Type"]),
            expectedLength: Int(request.postLength))
        #expect(form.value("a\\b\\\\c") == "v")
        #expect(form.file("up\\load")?.fileName == "C:\\dir\\f.txt")
        // 表 in Shift_JIS is 0x95 0x5C: its second byte is a backslash to a byte-wise reader (at
        // the end of a name it is refused, TrailingBackslashTests; inside one it is sent).
        let sjis = FormDataRequest(url: URL(string: "http://example.com")!)
        sjis.stringEncoding = .shiftJIS
        sjis.postFormat = .multipartFormData
        sjis.setPostValue("v", forKey: "表a")
        try sjis.buildPostBody()
        let sjisBody = try #require(sjis.postBody)
        let sjisType = try #require(sjis.requestHeaders["Content-Type"])
        let parsed = try FormBodyParser.parse(sjisBody, contentType: sjisType, expectedLength: Int(sjis.postLength))
        #expect(parsed.fields.count == 1)
        // Read in the charset the body declares (charset=shift_jis), the name is itself.
        #expect(parsed.fields.first?.name == "表a")
        // Read byte-wise (no charset declared), 0x5C is a backslash, and still not an escape.
        let undeclared = sjisType.replacingOccurrences(of: "charset=shift_jis; ", with: "")
        #expect(undeclared != sjisType)
        let byteWise = try FormBodyParser.parse(sjisBody, contentType: undeclared, expectedLength: Int(sjis.postLength))
        #expect(byteWise.fields.count == 1)
        #expect(byteWise.fields.first.map { Array($0.name.unicodeScalars.suffix(2)) } == ["\\", "a"])
    }

    @Test("a missing closing boundary is an error at the start of the unterminated content")
    func missingClosingBoundary() {
        let text = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue"
        #expect(throws: FormParseError(offset: 51, reason: "Missing closing boundary --XyZ--")) {
            try FormBodyParser.parse(Self.body(text), contentType: Self.contentType)
        }
    }

    @Test("a bad header line is an error at that line")
    func badHeader() {
        let text = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\nno colon here\r\n\r\nv\r\n--XyZ--\r\n"
        #expect { try FormBodyParser.parse(Self.body(text), contentType: Self.contentType) } throws: { error in
            (error as? FormParseError)?.offset == 49
        }
    }

    @Test("a wrong declared length, a missing boundary parameter, junk after the end, a missing name are errors")
    func otherErrors() {
        let good = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--XyZ--\r\n"
        #expect(throws: FormParseError.self) {
            try FormBodyParser.parse(Self.body(good), contentType: Self.contentType, expectedLength: 10)
        }
        #expect(throws: FormParseError.self) {
            try FormBodyParser.parse(Self.body(good), contentType: "multipart/form-data")
        }
        let junk = String(good.dropLast(2)) + "junk"
        #expect(throws: FormParseError.self) {
            try FormBodyParser.parse(Self.body(junk), contentType: Self.contentType)
        }
        let noName = "--XyZ\r\nContent-Disposition: form-data\r\n\r\nv\r\n--XyZ--\r\n"
        #expect(throws: FormParseError.self) {
            try FormBodyParser.parse(Self.body(noName), contentType: Self.contentType)
        }
        // RFC 2046: a preamble before the opening delimiter and an epilogue after the closing one are ignored.
        let framed = try? FormBodyParser.parse(Self.body("hello\r\n" + good + "bye\r\n"), contentType: Self.contentType)
        #expect(framed?.fields == [ParsedField(name: "a", value: "v")])
        #expect(throws: FormParseError(offset: 0, reason: "No opening boundary --XyZ in the body")) {
            try FormBodyParser.parse(Self.body("hello world"), contentType: Self.contentType)
        }
        let parsed = try? FormBodyParser.parse(Self.body(good), contentType: "multipart/form-data; boundary=\"XyZ\"")
        #expect(parsed?.fields == [ParsedField(name: "a", value: "v")])
    }

    @Test("URL-encoded: percent escapes and + decode; a bad escape is an error at its offset")
    func urlEncoded() throws {
        let form = try FormBodyParser.parse(
            Self.body("a=1&b=x%20y+z&c=%E2%9C%93&d"), contentType: "application/x-www-form-urlencoded; charset=utf-8")
        #expect(
            form.fields == [
                ParsedField(name: "a", value: "1"), ParsedField(name: "b", value: "x y z"),
                ParsedField(name: "c", value: "✓"), ParsedField(name: "d", value: ""),
            ])
        #expect(throws: FormParseError(offset: 6, reason: "Bad percent escape")) {
            try FormBodyParser.parse(Self.body("a=1&b=%G1"), contentType: "application/x-www-form-urlencoded")
        }
    }
}
