import FormDataKit
import FormDataKitAF
import FormDataKitTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Multipart requests: AFNetworking's exact bytes and lengths (reference §2.9–§2.10), and the
/// places FormDataKitAF does better.
@Suite("AF multipart")
struct AFMultipartTests {
    private func serializer(_ type: AFHTTPRequestSerializer.Type = AFHTTPRequestSerializer.self) -> AFHTTPRequestSerializer {
        let serializer = type.serializer()
        serializer.multipartBoundary = TestSupport.boundary
        return serializer
    }

    private static let referenceHex =
        "2d2d426f756e646172792b303132333435363738394142434445460d0a436f6e74656e742d446973706f736974696f6e3a20666f726d2d646174613b206e616d653d2261220d0a0d0a310d0a2d2d426f756e646172792b303132333435363738394142434445460d0a436f6e74656e742d446973706f736974696f6e3a20666f726d2d646174613b206e616d653d2266696c65223b2066696c656e616d653d22662e747874220d0a436f6e74656e742d547970653a20746578742f706c61696e0d0a0d0a68690d0a2d2d426f756e646172792b303132333435363738394142434445462d2d0d0a"

    private static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    @Test(arguments: [false, true])
    func referenceBodyIsByteExact(json: Bool) throws {
        let serializer = serializer(json ? AFJSONRequestSerializer.self : AFHTTPRequestSerializer.self)
        let request = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com/upload", parameters: ["a": "1"]
        ) { form in
            form.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "f.txt", mimeType: "text/plain")
        }
        let body = try TestSupport.body(of: request)
        #expect(body.count == 231)
        #expect(Self.hex(body) == Self.referenceHex)
        #expect(request.httpMethod == "POST")
        #expect(request.url?.absoluteString == "http://example.com/upload")
        #expect(request.httpBody == nil)
        #expect(request.httpBodyStream is AFMultipartBodyStream)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=Boundary+0123456789ABCDEF")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == "231")
        #expect(request.value(forHTTPHeaderField: "Accept-Language") != nil)
    }

    @Test func postWithConstructingBodyIs244Bytes() throws {
        let serializer = serializer()
        serializer.setValue("default value", forHTTPHeaderField: "field")
        let request = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: "https://httpbin.org/post", parameters: ["key": "value"]
        ) { form in
            form.appendPart(withFileData: Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
        }
        let body = try TestSupport.body(of: request)
        #expect(body.count == 244)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == "244")
        let parsed = try ParsedMultipart(body, boundary: TestSupport.boundary)
        #expect(parsed.parts.map(\.name) == ["key", "DataName"])
        #expect(parsed.parts[1].content == Data("Data".utf8))
        #expect(parsed.parts[1].header("Content-Type") == "data")
    }

    @Test func streamingPostPayloadIs20171Bytes() throws {
        let payload = Data(TestSupport.progressPayload.utf8)
        let request = try serializer().multipartFormRequest(
            withMethod: "POST", urlString: "https://httpbin.org/post", parameters: nil
        ) { form in
            form.appendPart(withFileData: payload, name: "AFNetworking", fileName: "AFNetworking", mimeType: "text/html")
        }
        #expect(request.value(forHTTPHeaderField: "Content-Length") == "20171")
        #expect(try TestSupport.body(of: request).count == 20171)
    }

    @Test func randomBoundaryHasAFNetworkingsShape() throws {
        let request = try AFHTTPRequestSerializer.serializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: ["a": "1"], constructingBodyWith: nil)
        let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
        let prefix = "multipart/form-data; boundary="
        #expect(contentType.hasPrefix(prefix))
        let boundary = String(contentType.dropFirst(prefix.count))
        #expect(boundary.count == 25)
        #expect(boundary.hasPrefix("Boundary+"))
        #expect(boundary.dropFirst(9).allSatisfy { "0123456789ABCDEF".contains($0) })
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: boundary)
        #expect(parsed.parts.count == 1)
    }

    @Test func headersOnlyPartWithNoHeadersIs65Bytes() throws {
        let request = try AFHTTPRequestSerializer.serializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: nil
        ) { form in
            form.appendPart(withHeaders: nil, body: Data("x".utf8))
        }
        #expect(try TestSupport.body(of: request).count == 65)
    }

    @Test func noPartsLeavesTheURLEncodedRequest() throws {
        let request = try serializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: nil, constructingBodyWith: nil)
        #expect(request.httpBodyStream == nil)
        #expect(request.httpBody == Data())
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == nil)
    }

    @Test func parametersComeFirstFlattenedWithRawNames() throws {
        let parameters: [String: Any] = [
            "user": ["name": "x", "age": 3] as [String: Any], "ids": [1, 2], "flag": true,
            "none": NSNull(), "raw": Data([0xFF, 0x00]),
        ]
        let request = try serializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: parameters
        ) { form in
            form.appendPart(withForm: Data("last".utf8), name: "z")
        }
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: TestSupport.boundary)
        #expect(parsed.parts.map(\.name) == ["flag", "ids[]", "ids[]", "none", "raw", "user[age]", "user[name]", "z"])
        #expect(
            parsed.parts.map(\.content) == [
                Data("1".utf8), Data("1".utf8), Data("2".utf8), Data(), Data([0xFF, 0x00]), Data("3".utf8), Data("x".utf8),
                Data("last".utf8),
            ])
        #expect(parsed.parts.allSatisfy { $0.headers.count == 1 })
    }

    @Test func parameterValuesUseTheSerializersEncoding() throws {
        let serializer = serializer()
        serializer.stringEncoding = .isoLatin1
        let request = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: ["é": "é"], constructingBodyWith: nil)
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: TestSupport.boundary)
        #expect(parsed.parts.first?.content == Data([0xE9]))
        #expect(parsed.parts.first?.name == "é")
        serializer.stringEncoding = .ascii
        #expect(throws: FormDataError.unencodableString(field: "k", role: .value, encoding: .ascii)) {
            try serializer.multipartFormRequest(
                withMethod: "POST", urlString: "http://example.com", parameters: ["k": "é"], constructingBodyWith: nil)
        }
    }

    @Test func namesAndFileNamesAreEscapedLikeBrowsers() throws {
        let request = try serializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: nil
        ) { form in
            form.appendPart(withFileData: Data("x".utf8), name: "a\"b\r\nX-Injected: 1", fileName: "f\".txt\n", mimeType: "text/plain")
        }
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: TestSupport.boundary)
        #expect(
            parsed.parts.first?.header("Content-Disposition") == "form-data; name=\"a%22b%0D%0AX-Injected: 1\"; filename=\"f%22.txt%0A\"")
        #expect(parsed.parts.first?.headers.count == 2)
    }

    @Test func customHeadersKeepContentDispositionFirst() throws {
        let request = try serializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: nil
        ) { form in
            form.appendPart(
                withHeaders: ["X-B": "2", "Content-Type": "text/plain", "Content-Disposition": "form-data; name=\"h\"", "A-First": "1"],
                body: Data("body".utf8))
        }
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: TestSupport.boundary)
        #expect(parsed.parts.first?.headers.map(\.name) == ["Content-Disposition", "A-First", "Content-Type", "X-B"])
    }

    @Test func unsafeHeaderValuesAreErrors() {
        #expect(throws: FormDataError.invalidHeaderValue(field: "f", value: "text/plain\r\nX: y")) {
            try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
                form.appendPart(withFileData: Data(), name: "f", fileName: "f", mimeType: "text/plain\r\nX: y")
            }
        }
        #expect(throws: FormDataError.self) {
            try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
                form.appendPart(withHeaders: ["X-Bad": "a\nb"], body: Data())
            }
        }
    }

    @Test func getAndHeadCannotBeMultipart() {
        for method in ["GET", "HEAD", "get"] {
            #expect(throws: AFURLRequestSerializationError.multipartMethodNotAllowed(method)) {
                try serializer().multipartFormRequest(
                    withMethod: method, urlString: "http://example.com", parameters: nil, constructingBodyWith: nil)
            }
        }
    }

    @Test func fileURLPartsUseNameExtensionAndSize() throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try TestSupport.write(Data("file content".utf8), named: "a b.JPG", in: directory)
        let unknown = try TestSupport.write(Data("?".utf8), named: "data.qqqzzz", in: directory)
        let request = try serializer().multipartFormRequest(
            withMethod: "PUT", urlString: "http://example.com", parameters: nil
        ) { form in
            try form.appendPart(withFileURL: file, name: "photo")
            try form.appendPart(withFileURL: unknown, name: "blob")
            try form.appendPart(withFileURL: file, name: "named", fileName: "other.bin", mimeType: "application/x-other")
        }
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: TestSupport.boundary)
        #expect(parsed.parts.map(\.fileName) == ["a b.JPG", "data.qqqzzz", "other.bin"])
        #expect(parsed.parts.map { $0.header("Content-Type") } == ["image/jpeg", "application/octet-stream", "application/x-other"])
        #expect(parsed.parts[0].content == Data("file content".utf8))
        #expect(request.httpMethod == "PUT")
    }

    @Test("appendPart(withFileURL:) refuses a FIFO, /dev/zero, a socket and /proc/self/status, naming the path")
    func nonRegularFilesAreRefused() throws {
        let special = try SpecialFiles()
        for (path, kind) in special.all {
            var caught: (any Error)?
            do {
                _ = try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
                    try form.appendPart(withFileURL: URL(fileURLWithPath: path), name: "file")
                }
            } catch {
                caught = error
            }
            #expect(caught as? FormDataError == .notARegularFile(path: path, kind: kind))
        }
    }

    @Test func fileURLErrorsPropagateWithAFCodes() throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let web = URL(string: "http://example.com/file.txt")!
        let missing = directory.appendingPathComponent("missing.txt")
        let cases: [(URL, AFURLRequestSerializationError, String)] = [
            (web, .notFileURL(web), "Expected URL to be a file URL"),
            (missing, .fileNotReachable(missing), "File URL not reachable."),
            (directory, .fileIsDirectory(directory), "File URL is a directory."),
        ]
        for (url, expected, reason) in cases {
            var caught: (any Error)?
            do {
                _ = try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
                    try form.appendPart(withFileURL: url, name: "file")
                }
            } catch {
                caught = error
            }
            #expect(caught as? AFURLRequestSerializationError == expected)
            let nsError = caught as NSError?
            #expect(nsError?.domain == AFURLRequestSerializationErrorDomain)
            #expect(nsError?.code == -1000)
            #expect(nsError?.localizedFailureReason == reason)
        }
    }

    @Test func aFileThatChangedSizeFailsTheReadInsteadOfSendingAWrongBody() throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try TestSupport.write(Data("12345".utf8), named: "grow.txt", in: directory)
        let request = try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            try form.appendPart(withFileURL: file, name: "file")
        }
        try Data("1234567890".utf8).write(to: file)
        let stream = try #require(request.httpBodyStream)
        #expect(throws: FormDataError.fileChanged(path: file.path, expectedSize: 5, actualSize: 10)) {
            try TestSupport.drain(stream)
        }
        #expect(stream.streamStatus == .error)
    }

    @Test func inputStreamPartsAreReadWithExactLength() throws {
        let payload = Data((0..<1000).map { UInt8($0 % 251) })
        let request = try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            form.appendPart(
                with: InputStream(data: payload), name: "s", fileName: "s.bin", length: 1000, mimeType: "application/octet-stream")
            form.appendPart(with: nil, name: "empty", fileName: "e", length: 0, mimeType: "text/plain")
        }
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: TestSupport.boundary)
        #expect(parsed.parts[0].content == payload)
        #expect(parsed.parts[1].content == Data())
    }

    @Test func inputStreamLengthMismatchesAreErrors() {
        let data = Data(repeating: 7, count: 10)
        let cases: [(InputStream?, Int64, AFURLRequestSerializationError)] = [
            (InputStream(data: data), 11, .inputStreamTooShort(name: "s", expected: 11, read: 10)),
            (InputStream(data: data), 9, .inputStreamTooLong(name: "s", expected: 9)),
            (nil, 3, .inputStreamTooShort(name: "s", expected: 3, read: 0)),
            // -1 is an unknown length (FormDataKit's addition, issue 56); other negatives are errors.
            (InputStream(data: data), -2, .invalidInputStreamLength(name: "s", length: -2)),
        ]
        for (stream, length, expected) in cases {
            #expect(throws: expected) {
                try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
                    form.appendPart(with: stream, name: "s", fileName: "s", length: length, mimeType: "text/plain")
                }
            }
        }
    }

    @Test func largeInputStreamPartsGoToATemporaryFileThatIsRemoved() throws {
        let size = 3 * 1024 * 1024 + 17
        let pattern = Data((0..<251).map { UInt8($0) })
        var payload = Data(capacity: size)
        while payload.count < size { payload.append(pattern.prefix(size - payload.count)) }
        var path: String?
        do {
            let request = try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) {
                form in
                form.appendPart(
                    with: InputStream(data: payload), name: "big", fileName: "big.bin", length: Int64(size),
                    mimeType: "application/octet-stream")
            }
            let stream = try #require(request.httpBodyStream as? AFMultipartBodyStream)
            for segment in stream.bodySource.segments {
                if case .file(let range) = segment.content { path = range.path }
            }
            let filePath = try #require(path)
            #expect(FileManager.default.fileExists(atPath: filePath))
            let parsed = try ParsedMultipart(try TestSupport.drain(stream, chunk: 100_000), boundary: TestSupport.boundary)
            #expect(parsed.parts.first?.content == payload)
            #expect(request.value(forHTTPHeaderField: "Content-Length") == String(stream.contentLength))
        }
        let filePath = try #require(path)
        #expect(!FileManager.default.fileExists(atPath: filePath))
    }

    @Test func bodyStreamCopiesReadTheBodyAgain() throws {
        let request = try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: ["a": "1"]) {
            form in
            form.appendPart(withFileData: Data(repeating: 1, count: 5000), name: "f", fileName: "f", mimeType: "x/y")
        }
        let stream = try #require(request.httpBodyStream as? AFMultipartBodyStream)
        let first = try TestSupport.drain(stream)
        #expect(try TestSupport.drain(stream) == Data())
        let again = try #require(stream.copy() as? AFMultipartBodyStream)
        #expect(again !== stream)
        #expect(again.streamStatus == .notOpen)
        #expect(try TestSupport.drain(again) == first)
        #expect(UInt64(first.count) == stream.contentLength)
    }

    @Test func streamReportsBytesUntilTheEndAndThenAtEnd() throws {
        let request = try serializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: ["a": "1"], constructingBodyWith: nil)
        let stream = try #require(request.httpBodyStream)
        #expect(stream.streamStatus == .notOpen)
        stream.open()
        #expect(stream.hasBytesAvailable)
        var buffer = [UInt8](repeating: 0, count: 1000)
        let got = stream.read(&buffer, maxLength: 1000)
        #expect(got == 74 + 33)
        #expect(!stream.hasBytesAvailable)
        #expect(stream.streamStatus == .atEnd)
        #expect(stream.read(&buffer, maxLength: 1000) == 0)
        stream.close()
        #expect(stream.streamStatus == .closed)
    }

    @Test func throttlingLimitsEachRead() throws {
        let request = try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            form.appendPart(withFileData: Data(repeating: 9, count: 300), name: "f", fileName: "f", mimeType: "x/y")
            form.throttleBandwidth(withPacketSize: 64, delay: 0)
        }
        let stream = try #require(request.httpBodyStream as? AFMultipartBodyStream)
        #expect(stream.numberOfBytesInPacket == 64)
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var sizes: [Int] = []
        while true {
            let got = stream.read(&buffer, maxLength: 4096)
            if got <= 0 { break }
            sizes.append(got)
        }
        #expect(sizes.allSatisfy { $0 <= 64 })
        #expect(UInt64(sizes.reduce(0, +)) == stream.contentLength)
    }

    @Test func fixedBoundaryThatOccursInContentIsAnError() {
        #expect(throws: FormDataError.boundaryCollision(boundary: TestSupport.boundary, field: "f")) {
            try serializer().multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
                form.appendPart(withFileData: Data("x--\(TestSupport.boundary)y".utf8), name: "f", fileName: "f", mimeType: "x/y")
            }
        }
    }

    @Test func invalidFixedBoundaryIsAnError() {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.multipartBoundary = "bad\r\nboundary"
        #expect(throws: AFURLRequestSerializationError.invalidBoundary("bad\r\nboundary")) {
            try serializer.multipartFormRequest(
                withMethod: "POST", urlString: "http://example.com", parameters: ["a": "1"], constructingBodyWith: nil)
        }
    }
}
