@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// Byte-exact ports of the offline-checkable cases of ASIFormDataRequestTests and the body parts
/// of ASIHTTPRequestTests (see shared/reference/asi-formdatarequest.md §5).
@Suite("ASIFormDataRequestTests, ported")
struct ASIFormDataRequestPortTests {
    let B = fixedBoundary

    @Test("testDefaultMethod: a form request is POST, URL-encoded, UTF-8")
    func defaultMethod() {
        let request = FormDataRequest(url: anyURL)
        #expect(request.requestMethod == "POST")
        #expect(request.postFormat == .urlEncoded)
        #expect(request.stringEncoding == .utf8)
        #expect(!request.shouldStreamPostDataFromDisk)
        #expect(!request.shouldCompressRequestBody)
        #expect(request.postLength == 0)
        #expect(FormDataRequest.request(with: anyURL).url == anyURL)
    }

    @Test("testAddNilKeysAndValues (offline): a nil key is ignored")
    func nilKeyIgnored() throws {
        let request = FormDataRequest(url: URL(string: "http://allseeing-i.com")!)
        request.addPostValue("value1", forKey: nil)
        request.addPostValue("value2", forKey: "key2")
        try request.buildPostBody()
        #expect(request.postBody == bytes("key2=value2"))
        #expect(request.requestHeaders["Content-Length"] == "11")
    }

    @Test("testAddNilKeysAndValues (body): nil value and nil data arrive empty")
    func nilValuesAndData() throws {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        request.setPostValue(nil, forKey: "key1")
        request.setPostValue("value2", forKey: "key2")
        request.setData(nil, forKey: "file1")
        request.setData(bytes("hello"), forKey: "file2")
        try request.buildPostBody()
        let expected =
            "--\(B)\r\nContent-Disposition: form-data; name=\"key1\"\r\n\r\n\r\n"
            + "--\(B)\r\nContent-Disposition: form-data; name=\"key2\"\r\n\r\nvalue2\r\n"
            + "--\(B)\r\nContent-Disposition: form-data; name=\"file1\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n"
            + "--\(B)\r\nContent-Disposition: form-data; name=\"file2\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n"
            + "--\(B)--\r\n"
        #expect(try sentBody(request) == bytes(expected))
        #expect(request.postBody == nil)
        #expect(request.postBodyFilePath != nil)
        #expect(request.postFormat == .multipartFormData)
        #expect(request.shouldStreamPostDataFromDisk)
    }

    @Test("testPostWithFileUpload: file and data defaults, explicit names and types")
    func fileUploadDefaults() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let big = try scratch.write("bigfile", Data(count: 32768))
        let data = Data(count: 32768)

        func body(_ configure: (FormDataRequest) throws -> Void) throws -> Data {
            let request = FormDataRequest(url: anyURL)
            request.multipartBoundary = B
            request.setPostValue("foo", forKey: "post_var")
            try configure(request)
            try request.buildPostBody()
            let body = try sentBody(request)
            #expect(request.postLength == UInt64(body.count))
            #expect(request.requestHeaders["Content-Length"] == String(body.count))
            return body
        }
        func expected(fileName: String, type: String) -> Data {
            bytes(
                "--\(B)\r\nContent-Disposition: form-data; name=\"post_var\"\r\n\r\nfoo\r\n--\(B)\r\n"
                    + "Content-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\nContent-Type: \(type)\r\n\r\n")
                + data + bytes("\r\n--\(B)--\r\n")
        }
        #expect(
            try body { try $0.setFile(big, forKey: "file") }
                == expected(fileName: "bigfile", type: "application/octet-stream"))
        #expect(
            try body { $0.setData(data, forKey: "file") }
                == expected(fileName: "file", type: "application/octet-stream"))
        #expect(
            try body { try $0.setFile(big, withFileName: "myfile", andContentType: "text/plain", forKey: "file") }
                == expected(fileName: "myfile", type: "text/plain"))
        #expect(
            try body { $0.setData(data, withFileName: "myfile", andContentType: "text/plain", forKey: "file") }
                == expected(fileName: "myfile", type: "text/plain"))
    }

    @Test("testPostWithFileUpload: non-string values are sent as their description")
    func valueDescriptions() throws {
        let request = FormDataRequest(url: anyURL)
        request.addPostValue(true, forKey: "t")
        request.addPostValue(false, forKey: "f")
        request.addPostValue(42, forKey: "i")
        request.addPostValue(1.0, forKey: "d1")
        request.addPostValue(0.5, forKey: "d2")
        request.addPostValue(NSNumber(value: 7), forKey: "n")
        request.addPostValue(Date(timeIntervalSince1970: 1_700_000_000), forKey: "date")
        try request.buildPostBody()
        #expect(request.postBody == bytes("t=1&f=0&i=42&d1=1&d2=0.5&n=7&date=2023-11-14%2022%3A13%3A20%20%2B0000"))
    }

    @Test("testEmptyData: empty values, streamed from disk")
    func emptyDataStreamedFromDisk() throws {
        let request = FormDataRequest(url: anyURL)
        request.setPostValue("hello", forKey: "a_non_empty_string")
        request.setPostValue("", forKey: "zzz_empty_string")
        request.setPostValue("there", forKey: "xxx_non_empty_string")
        request.shouldStreamPostDataFromDisk = true
        try request.buildPostBody()
        #expect(request.postBody == nil)
        let path = try #require(request.postBodyFilePath)
        #expect(
            FileManager.default.contents(atPath: path)
                == bytes("a_non_empty_string=hello&zzz_empty_string=&xxx_non_empty_string=there"))
        #expect(request.postLength == 69)
    }

    @Test("testURLEncodedPost: the derived exact body")
    func urlEncodedPost() throws {
        let request = FormDataRequest(url: anyURL)
        request.setPostValue("value1", forKey: "value1")
        request.setPostValue("(%20 ? =)", forKey: "value2")
        request.setPostValue("£100.00", forKey: "value3")
        request.setPostValue("", forKey: "value4")
        request.setPostValue("&??aaa=//ciao\u{E8}\u{E8}\u{E8}", forKey: "teskey&aa")
        request.shouldStreamPostDataFromDisk = true
        request.postFormat = .urlEncoded
        try request.buildPostBody()
        #expect(
            try sentBody(request)
                == bytes(
                    "value1=value1&value2=%28%2520%20%3F%20%3D%29&value3=%C2%A3100.00&value4=&teskey%26aa=%26%3F%3Faaa%3D%2F%2Fciao%C3%A8%C3%A8%C3%A8"
                ))
        #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test("Every printable ASCII character escapes exactly as CFURL did")
    func printableASCIIEscaping() throws {
        let input = String((0x20...0x7E).map { Character(UnicodeScalar(UInt8($0))) })
        let request = FormDataRequest(url: anyURL)
        request.addPostValue(input, forKey: "k")
        try request.buildPostBody()
        let expected =
            "k=%20%21%22%23%24%25%26%27%28%29%2A%2B%2C-.%2F0123456789%3A%3B%3C%3D%3E%3F%40"
            + "ABCDEFGHIJKLMNOPQRSTUVWXYZ%5B%5C%5D%5E_%60abcdefghijklmnopqrstuvwxyz%7B%7C%7D%7E"
        #expect(request.postBody == bytes(expected))
        #expect(request.postBody == bytes("k=" + (try URLFormEncoding.escape(input, encoding: .utf8))))
    }

    @Test("Control characters, DEL and non-ASCII are escaped byte by byte")
    func controlCharacters() throws {
        let request = FormDataRequest(url: anyURL)
        request.addPostValue("a\r\n\t\u{7F}é", forKey: "x y")
        try request.buildPostBody()
        #expect(request.postBody == bytes("x%20y=a%0D%0A%09%7F%C3%A9"))
    }

    static let poundEuro = "£££s don't seem to buy me many €€€s these days"
    static let poundDollar = "£££s don't seem to buy me many $$$s these days"

    @Test("testCharset: UTF-8 url-encoded")
    func charsetUTF8() throws {
        let request = FormDataRequest(url: anyURL)
        request.setPostValue(Self.poundEuro, forKey: "value")
        try request.buildPostBody()
        #expect(
            request.postBody
                == bytes(
                    "value=%C2%A3%C2%A3%C2%A3s%20don%27t%20seem%20to%20buy%20me%20many%20%E2%82%AC%E2%82%AC%E2%82%ACs%20these%20days"))
    }

    @Test(
        "testCharset: ISO-8859-1 and Windows-1252, url-encoded",
        arguments: [
            (String.Encoding.isoLatin1, "iso-8859-1"), (String.Encoding.windowsCP1252, "windows-1252"),
        ])
    func charsetLatin(encoding: String.Encoding, name: String) throws {
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = encoding
        request.setPostValue(Self.poundDollar, forKey: "value")
        try request.buildPostBody()
        #expect(
            request.postBody
                == bytes(
                    "value=%A3%A3%A3s%20don%27t%20seem%20to%20buy%20me%20many%20%24%24%24s%20these%20days"))
        #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=\(name)")
    }

    @Test(
        "testCharset: multipart in UTF-8, ISO-8859-1 and Windows-1252",
        arguments: [
            (String.Encoding.utf8, "utf-8", poundEuro, Data(poundEuro.utf8)),
            (String.Encoding.isoLatin1, "iso-8859-1", poundDollar, Data([0xA3, 0xA3, 0xA3]) + Data(poundDollar.utf8.dropFirst(6))),
            (String.Encoding.windowsCP1252, "windows-1252", poundDollar, Data([0xA3, 0xA3, 0xA3]) + Data(poundDollar.utf8.dropFirst(6))),
        ])
    func charsetMultipart(encoding: String.Encoding, name: String, value: String, valueBytes: Data) throws {
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = encoding
        request.postFormat = .multipartFormData
        request.multipartBoundary = B
        request.setPostValue(value, forKey: "value")
        try request.buildPostBody()
        let expected = bytes("--\(B)\r\nContent-Disposition: form-data; name=\"value\"\r\n\r\n") + valueBytes + bytes("\r\n--\(B)--\r\n")
        #expect(request.postBody == expected)
        #expect(request.requestHeaders["Content-Type"] == "multipart/form-data; charset=\(name); boundary=\(B)")
    }

    @Test("testCharset / GH issue 36: no charset in the per-part headers")
    func noPerPartCharset() throws {
        let request = FormDataRequest(url: anyURL)
        request.setData(bytes("test 123"), forKey: "file")
        request.requestMethod = "PUT"
        try request.buildPostBody()
        let body = String(decoding: try sentBody(request), as: UTF8.self)
        #expect(!body.contains("charset=utf-8"))
        #expect(request.requestMethod == "PUT")
    }

    @Test("testPUT: PUT is kept, DELETE with a body becomes POST")
    func putAndDelete() throws {
        let put = FormDataRequest(url: anyURL)
        put.requestMethod = "PUT"
        put.setPostValue("cheep cheep", forKey: "hello")
        try put.buildPostBody()
        #expect(put.requestMethod == "PUT")
        #expect(put.postBody == bytes("hello=cheep%20cheep"))

        let delete = FormDataRequest(url: anyURL)
        delete.requestMethod = "DELETE"
        delete.setPostValue("cheep cheep", forKey: "hello")
        try delete.buildPostBody()
        #expect(delete.requestMethod == "POST")
    }

    @Test(
        "testRequestMethod: GET and HEAD with a body become POST; FINK is kept",
        arguments: [
            ("GET", "POST"), ("HEAD", "POST"), ("DELETE", "POST"), ("PUT", "PUT"), ("FINK", "FINK"), ("PATCH", "PATCH"),
        ])
    func methodRules(method: String, expected: String) throws {
        let request = FormDataRequest(url: anyURL)
        request.requestMethod = method
        request.addPostValue("King", forKey: "k")
        try request.buildPostBody()
        #expect(request.requestMethod == expected)
    }

    @Test("An empty form has no body: no Content-Type, no Content-Length, method kept")
    func emptyForm() throws {
        let request = FormDataRequest(url: anyURL)
        request.requestMethod = "GET"
        try request.buildPostBody()
        #expect(request.postLength == 0)
        #expect(request.postBody == nil)
        #expect(request.postBodyFilePath == nil)
        #expect(request.requestHeaders.isEmpty)
        #expect(request.requestMethod == "GET")
    }

    @Test("An empty value makes a non-empty body: `key=` is one pair")
    func emptyKeyAndValue() throws {
        let request = FormDataRequest(url: anyURL)
        request.addPostValue("", forKey: "")
        request.addPostValue("v", forKey: "")
        try request.buildPostBody()
        #expect(request.postBody == bytes("=&=v"))
    }

    @Test("testMultipleValuesForASingleKey: add keeps duplicates, set replaces them all")
    func multipleValues() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let file1 = try scratch.write("file1.txt", "hello")
        let file2 = try scratch.write("file2.txt", "there")

        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        for value in ["here", "are", "some", "values"] { request.addPostValue(value, forKey: "test_value[]") }
        try request.addFile(file1, forKey: "test_file[]")
        try request.addFile(file2, forKey: "test_file[]")
        #expect(request.form.values.map(\.value) == ["here", "are", "some", "values"])
        #expect(request.form.files.map(\.fileName) == ["file1.txt", "file2.txt"])
        #expect(request.form.files.map(\.contentType) == ["text/plain", "text/plain"])

        request.setPostValue("this is new data", forKey: "test_value[]")
        request.setData(bytes("this is new data"), forKey: "test_file[]")
        #expect(request.form.values.map(\.value) == ["this is new data"])
        #expect(request.form.files.map(\.fileName) == ["file"])
        try request.buildPostBody()
        let expected =
            "--\(B)\r\nContent-Disposition: form-data; name=\"test_value[]\"\r\n\r\nthis is new data\r\n"
            + "--\(B)\r\nContent-Disposition: form-data; name=\"test_file[]\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nthis is new data\r\n"
            + "--\(B)--\r\n"
        #expect(try sentBody(request) == bytes(expected))
    }

    @Test("setPostValue moves the key to the end of the order")
    func setReorders() throws {
        let request = FormDataRequest(url: anyURL)
        request.addPostValue("1", forKey: "a")
        request.addPostValue("2", forKey: "b")
        request.setPostValue("3", forKey: "a")
        try request.buildPostBody()
        #expect(request.postBody == bytes("b=2&a=3"))
    }

    @Test("testMimeType: txt, missing file, no extension")
    func mimeTypes() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write("testfile.txt", "x")) == "text/plain")
        #expect(FormDataRequest.mimeType(forFileAtPath: "/nowhere") == nil)
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write("testfile", "x")) == "application/octet-stream")
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write("cert.cer", "x")) == "application/x-x509-ca-cert")
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write("PHOTO.JPG", "x")) == "image/jpeg")
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write("clip.mov", "x")) == "video/quicktime")
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write("doc.pdf", "x")) == "application/pdf")
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write("a.unknownext", "x")) == "application/octet-stream")
        #expect(FormDataRequest.mimeType(forFileAtPath: try scratch.write(".hidden", "x")) == "application/octet-stream")
    }
}
