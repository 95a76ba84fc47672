import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// Issue 55, point 8: the migration kit reads text in the charset a body declares — the
/// `charset` of a URL-encoded body's `Content-Type`; for a multipart part its own charset, else
/// the `_charset_` field, else the request's — and compares the raw bytes.
@Suite("Declared charsets in the kit")
struct DeclaredCharsetTests {
    /// 姓名 = 张三 and 中文 in GB2312.
    static let nameGB2312: [UInt8] = [0xD0, 0xD5, 0xC3, 0xFB]
    static let valueGB2312: [UInt8] = [0xD5, 0xC5, 0xC8, 0xFD]
    static let otherGB2312: [UInt8] = [0xD6, 0xD0, 0xCE, 0xC4]
    /// 臺灣 in Big5.
    static let valueBig5: [UInt8] = [0xBB, 0x4F, 0xC6, 0x57]

    private static func part(_ name: [UInt8], _ content: [UInt8], type: String? = nil) -> Data {
        var data = Data("--b\r\nContent-Disposition: form-data; name=\"".utf8) + Data(name) + Data("\"\r\n".utf8)
        if let type { data += Data("Content-Type: \(type)\r\n".utf8) }
        return data + Data("\r\n".utf8) + Data(content) + Data("\r\n".utf8)
    }

    @Test("URL-encoded: charset=gb2312 names and values read as GB2312; the bytes stay as sent")
    func urlEncodedGB2312() throws {
        let body = Data("%D0%D5%C3%FB=%D5%C5%C8%FD".utf8)
        let type = "application/x-www-form-urlencoded; charset=gb2312"
        let form = try FormBodyParser.parse(body, contentType: type)
        #expect(form.fields == [ParsedField(name: "姓名", value: "张三")])
        let parts = try FormBodyParser.parseParts(body, contentType: type)
        #expect(parts.map(\.content) == [Data(Self.valueGB2312)])
        #expect(parts.map(\.charset) == ["gb2312"])
        let snapshot = try FormSnapshot(body: body, contentType: type)
        #expect(snapshot.parts.map(\.name) == ["姓名"])
        #expect(snapshot.parts.first?.text == "张三")
        #expect(snapshot.parts.first?.content == Data(Self.valueGB2312))
        #expect(snapshot.description.contains("part 1: \"姓名\" = \"张三\""), "\(snapshot)")
        // Without a charset: as before (UTF-8, else ISO-8859-1).
        let undeclared = try FormBodyParser.parse(body, contentType: "application/x-www-form-urlencoded")
        #expect(undeclared.fields == [ParsedField(name: "ÐÕÃû", value: "ÕÅÈý")])
    }

    @Test("Multipart: the part's own charset, else _charset_, else the request's")
    func multipartPrecedence() throws {
        // The request says gb2312; one part says big5 for itself.
        var body = Self.part(Self.nameGB2312, Self.valueGB2312)
        body += Self.part(Array("tw".utf8), Self.valueBig5, type: "text/plain; charset=big5")
        body += Data("--b--\r\n".utf8)
        let form = try FormBodyParser.parse(body, contentType: "multipart/form-data; charset=gb2312; boundary=b")
        #expect(form.fields == [ParsedField(name: "姓名", value: "张三"), ParsedField(name: "tw", value: "臺灣")])

        // No request charset: the `_charset_` field says what the form is in.
        var fieldDeclared = Self.part(Array("_charset_".utf8), Array("GB2312".utf8))
        fieldDeclared += Self.part(Self.nameGB2312, Self.valueGB2312) + Data("--b--\r\n".utf8)
        let declared = try FormBodyParser.parse(fieldDeclared, contentType: "multipart/form-data; boundary=b")
        #expect(declared.value("姓名") == "张三", "\(declared)")
        #expect(declared.value("_charset_") == "GB2312")
    }

    @Test("Bytes not valid in the declared charset (or an unknown charset) read as before")
    func invalidOrUnknownCharset() throws {
        let body = Data("q=%FF%FF".utf8)
        let form = try FormBodyParser.parse(body, contentType: "application/x-www-form-urlencoded; charset=gb2312")
        #expect(form.value("q") == "ÿÿ")
        let unknown = try FormBodyParser.parse(Data("q=%C3%A9".utf8), contentType: "application/x-www-form-urlencoded; charset=x-no-such")
        #expect(unknown.value("q") == "é")
    }

    @Test("formdata diff's report shows a GB2312 difference as text; equal bytes are equivalent")
    func diffReportShowsDeclaredText() throws {
        let type = "application/x-www-form-urlencoded; charset=gb2312"
        let a = try FormSnapshot(body: Data("q=%D5%C5%C8%FD".utf8), contentType: type)
        let b = try FormSnapshot(body: Data("q=%D6%D0%CE%C4".utf8), contentType: type)
        let report = a.diffReport(against: b)
        #expect(report == "1 difference (A ≠ B):\n  part 1 \"q\" content: A \"张三\" ≠ B \"中文\", first difference at byte 0", "\(report)")
        #expect(a.matches(try FormSnapshot(body: Data("q=%D5%C5%C8%FD".utf8), contentType: type)))
    }

    @Test("The receiver (formdata serve) logs a GB2312 form as text")
    func receiverDecodes() async throws {
        let receiver = try await FormReceiver.start()
        defer { receiver.stopSynchronously() }
        let request = FormDataRequest(url: receiver.url("/upload"))
        request.stringEncoding = try #require(String.Encoding.iana("gb2312"))
        request.addPostValue("张三", forKey: "姓名")
        request.addData(Data("x".utf8), withFileName: "报告.txt", andContentType: "text/plain", forKey: "附件")
        let response = try await request.start()
        #expect(response.statusCode == 200)
        let received = try #require(receiver.lastRequest)
        #expect(received.form?.value("姓名") == "张三", "\(received.terminalSummary)")
        #expect(received.form?.file("附件")?.fileName == "报告.txt")
        #expect(received.terminalSummary.contains("张三"), "\(received.terminalSummary)")
    }
}
