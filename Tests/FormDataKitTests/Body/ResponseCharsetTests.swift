@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
@testable import FormDataKit
import Testing

/// Responses from legacy servers decode in the charsets requests can be sent in (the bytes are
/// Python's codecs' output for the same text).
@Suite("Response text in legacy charsets")
struct ResponseCharsetTests {
    static func bytes(_ hex: String) -> Data {
        var out = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    @Test(
        "responseString and FormDataResponse.string decode by the Content-Type charset",
        arguments: [
            ("gbk", "中文表单", "d6d0cec4b1edb5a5"),
            ("GB2312", "中文表单", "d6d0cec4b1edb5a5"),
            ("big5", "中文表單", "a4a4a4e5aaedb3e6"),
            ("euc-kr", "한국어", "c7d1b1b9beee"),
            ("koi8-r", "Привет", "f0d2c9d7c5d4"),
            ("euc-jp", "日本語", "c6fccbdcb8ec"),
            ("gb18030", "中文𠀀", "d6d0cec495328236"),
            ("Shift_JIS", "日本語", "93fa967b8cea"),
            ("\"windows-1251\"", "Привет", "cff0e8e2e5f2"),
        ])
    func decodes(charset: String, text: String, hex: String) {
        let response = FormDataResponse(
            statusCode: 200, headers: ["Content-Type": "text/html; charset=\(charset)"],
            body: Self.bytes(hex))
        #expect(response.string == text)
    }

    @Test("no charset or an unknown one: ISO-8859-1 (ASI's default); bytes invalid in the charset: UTF-8 with replacements")
    func defaults() {
        let latin = FormDataResponse(statusCode: 200, headers: ["Content-Type": "text/plain"], body: Data([0x63, 0x61, 0x66, 0xE9]))
        #expect(latin.string == "café")
        let unknown = FormDataResponse(
            statusCode: 200, headers: ["Content-Type": "text/plain; charset=x-no-such"],
            body: Data("ok é".utf8))
        #expect(unknown.string == "ok Ã©")
        let invalid = FormDataResponse(statusCode: 200, headers: ["Content-Type": "text/plain; charset=gbk"], body: Data([0x41, 0xFF]))
        #expect(invalid.string == "A\u{FFFD}")
    }

    @Test("unsupportedEncoding names the charset")
    func unsupportedNamesCharset() {
        #expect(
            FormDataError.unsupportedEncoding(.utf16).description
                == "The string encoding utf-16 is not ASCII-compatible and cannot be used for form bodies")
        #expect(FormDataError.unsupportedEncoding(String.Encoding(rawValue: 0x7123_4567)).description.contains("raw value"))
    }
}
