@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitAF
import Testing
@testable import FormDataKit

/// A part name or filename ending in a backslash is refused, naming the field: written as
/// browsers, ASIHTTPRequest and AFNetworking write it (`name="a\"; filename="ok.txt"`), every
/// parser measured reads another part than was meant (PeerParserBackslashTests). Every other
/// backslash is sent as before, byte for byte.
@Suite("A name or filename ending in a backslash")
struct TrailingBackslashTests {
    /// The multipart body `request` builds (in memory or spooled).
    static func body(_ request: FormDataRequest) throws -> Data {
        try request.buildPostBody()
        if let path = request.postBodyFilePath { return try Data(contentsOf: URL(fileURLWithPath: path)) }
        return try #require(request.postBody)
    }

    @Test("a value field's name ending in \\ is refused when the body is built, naming the field")
    func valueNameRefused() throws {
        let request = FormDataRequest(url: anyURL)
        request.postFormat = .multipartFormData
        request.addPostValue("x", forKey: "a\\")
        #expect(throws: FormDataError.trailingBackslash(field: "a\\", role: .name)) { try request.buildPostBody() }
        #expect(request.postBody == nil && request.postBodyFilePath == nil)
    }

    @Test("a file field's name, or a filename, ending in \\ is refused (given, or a file's own name)")
    func fileNameAndFieldNameRefused() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let data = FormDataRequest(url: anyURL)
        data.addData(Data("hi".utf8), withFileName: "ok.txt", andContentType: nil, forKey: "a\\")
        #expect(throws: FormDataError.trailingBackslash(field: "a\\", role: .name)) { try data.buildPostBody() }

        let named = FormDataRequest(url: anyURL)
        named.addData(Data("hi".utf8), withFileName: "C:\\dir\\", andContentType: nil, forKey: "file")
        #expect(throws: FormDataError.trailingBackslash(field: "file", role: .fileName)) { try named.buildPostBody() }

        // A Linux file may be called `ok\`: sent under its own name, it would be misread too.
        let path = try scratch.write("ok\\", "hi")
        let file = FormDataRequest(url: anyURL)
        try file.addFile(path, forKey: "upload")
        #expect(throws: FormDataError.trailingBackslash(field: "upload", role: .fileName)) { try file.buildPostBody() }
        // Given another filename, the same file goes.
        try file.setFile(path, withFileName: "ok.txt", andContentType: nil, forKey: "upload")
        #expect(try String(decoding: Self.body(file), as: UTF8.self).contains(#"name="upload"; filename="ok.txt""#))
    }

    @Test("in Shift_JIS a character whose last byte is 0x5C (表) ends the name in a backslash too")
    func legacyCharsetTrailByte() throws {
        let request = FormDataRequest(url: anyURL)
        request.postFormat = .multipartFormData
        request.stringEncoding = .shiftJIS
        request.addPostValue("x", forKey: "表")
        #expect(throws: FormDataError.trailingBackslash(field: "表", role: .name)) { try request.buildPostBody() }
        let utf8 = FormDataRequest(url: anyURL)
        utf8.postFormat = .multipartFormData
        utf8.addPostValue("x", forKey: "表")
        #expect(try String(decoding: Self.body(utf8), as: UTF8.self).contains(#"name="表""#))
    }

    @Test("FormDataKitAF refuses it too, when the request is finalized")
    func afRefused() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        #expect(throws: FormDataError.trailingBackslash(field: "a\\", role: .name)) {
            _ = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/", parameters: nil) { form in
                form.appendPart(withFileData: Data("hi".utf8), name: "a\\", fileName: "ok.txt", mimeType: "text/plain")
            }
        }
        #expect(throws: FormDataError.trailingBackslash(field: "file", role: .fileName)) {
            _ = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/", parameters: nil) { form in
                form.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "ok\\", mimeType: "text/plain")
            }
        }
        #expect(throws: FormDataError.trailingBackslash(field: "p\\", role: .name)) {
            _ = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/", parameters: ["p\\": "1"]) { _ in }
        }
    }

    @Test("a backslash anywhere else is sent as ASIHTTPRequest, AFNetworking and browsers send it")
    func otherBackslashesUnchanged() throws {
        let request = FormDataRequest(url: anyURL)
        request.addPostValue("v", forKey: "a\\b")
        request.addData(Data("hi".utf8), withFileName: "C:\\dir\\f.txt", andContentType: "text/plain", forKey: "\\f")
        let text = String(decoding: try Self.body(request), as: UTF8.self)
        #expect(text.contains("Content-Disposition: form-data; name=\"a\\b\"\r\n\r\nv\r\n"))
        #expect(text.contains("Content-Disposition: form-data; name=\"\\f\"; filename=\"C:\\dir\\f.txt\"\r\n"))
    }

    @Test("the error names the field and the role, and counts as a build error (ASI code 6)")
    func errorDescription() {
        let error = FormDataError.trailingBackslash(field: "a\\", role: .fileName)
        #expect(error.asiErrorCode == 6)
        #expect(error.description.hasPrefix(#"The fileName of field "a\\" ends in a backslash"#), "\(error.description)")
    }
}
