@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// A form-data part's header lines are written straight from its name, filename and content type
/// (UTF-8); the same part given those lines as strings (``MultipartPart/headers``, the way every
/// other part and every other charset is written) must come out byte for byte the same, with the
/// same debug text and the same errors.
@Suite("Form-data part headers written directly")
struct FormDataHeaderLinesTests {
    private static let names = [
        "plain", "", "with \"quotes\"", "line\r\nbreak", "trailing\\", "non-ASCII é 表 🙂", "nul\u{0}inside", "semi; colon=x",
    ]
    private static let contentTypes = ["text/plain", "application/octet-stream; x=\"y\"", "bad\r\nInjected: 1", "nul\u{0}type"]

    /// The body bytes, debug text and error of writing `part`.
    private static func written(_ part: MultipartPart, encoding: String.Encoding = .utf8) -> (Data, String?, FormDataError?) {
        var builder = BodyBuilder(encoding: encoding, debug: true)
        do throws(FormDataError) {
            try MultipartWriter(boundary: "B0undary").write([part], into: &builder)
        } catch {
            return (Data(), nil, error)
        }
        let source = builder.finish()
        return ((try? source.readAll()) ?? Data(), builder.debugText, nil)
    }

    /// `part` with its header lines given as strings (the line-by-line path).
    private static func asLines(_ part: MultipartPart) -> MultipartPart {
        MultipartPart(
            fieldName: part.fieldName, headers: part.headers, content: part.content, contentType: part.contentType,
            disposition: part.disposition)
    }

    @Test("value and file parts: the same bytes, debug text and errors as their lines written one by one")
    func sameAsLines() {
        var compared = 0
        for name in Self.names {
            let value = MultipartPart.value(name: name, content: .text("v"))
            let direct = Self.written(value)
            let lines = Self.written(Self.asLines(value))
            #expect(direct.0 == lines.0 && direct.1 == lines.1 && direct.2 == lines.2, "value \(name.debugDescription)")
            for fileName in Self.names {
                for contentType in Self.contentTypes {
                    let file = MultipartPart.file(name: name, fileName: fileName, contentType: contentType, content: .data(Data("d".utf8)))
                    let direct = Self.written(file)
                    let lines = Self.written(Self.asLines(file))
                    #expect(
                        direct.0 == lines.0 && direct.1 == lines.1 && direct.2 == lines.2,
                        "file \(name.debugDescription) \(fileName.debugDescription) \(contentType.debugDescription)")
                    compared += 1
                }
            }
        }
        #expect(compared == Self.names.count * Self.names.count * Self.contentTypes.count)
    }

    @Test("the exact lines of a file part, and a value part's one line")
    func exactLines() {
        let file = MultipartPart.file(name: "a\"b", fileName: "x\ny.txt", contentType: "text/plain", content: .data(Data("d".utf8)))
        #expect(
            Self.written(file).0
                == Data(
                    "--B0undary\r\nContent-Disposition: form-data; name=\"a%22b\"; filename=\"x%0Ay.txt\"\r\nContent-Type: text/plain\r\n\r\nd\r\n--B0undary--\r\n"
                        .utf8))
        let value = MultipartPart.value(name: "n", content: .text("v"))
        #expect(Self.written(value).0 == Data("--B0undary\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\nv\r\n--B0undary--\r\n".utf8))
        #expect(
            value.headers.map(\.name) == ["Content-Disposition"] && file.headers.map(\.name) == ["Content-Disposition", "Content-Type"])
    }

    @Test("another charset writes the lines one by one: Shift_JIS bytes as before")
    func otherCharset() throws {
        let encoding = String.Encoding.shiftJIS
        let part = MultipartPart.file(name: "名前", fileName: "ファイル.txt", contentType: "text/plain", content: .data(Data("d".utf8)))
        let direct = Self.written(part, encoding: encoding)
        let lines = Self.written(Self.asLines(part), encoding: encoding)
        #expect(direct.2 == nil && direct.0 == lines.0 && direct.1 == lines.1)
        let name = try #require("名前".data(using: encoding))
        #expect(direct.0.range(of: Data("name=\"".utf8) + name + Data("\"".utf8)) != nil)
    }
}
