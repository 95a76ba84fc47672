import FormDataKit
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// FormSnapshot: building from each source, strictness, tolerances and the diff.
@Suite("FormSnapshot")
struct FormSnapshotTests {
    private static func multipart(_ boundary: String, _ parts: [(String, String?, String?, String)]) -> Data {
        var text = ""
        for (name, fileName, type, content) in parts {
            text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
            if let fileName { text += "; filename=\"\(fileName)\"" }
            text += "\r\n"
            if let type { text += "Content-Type: \(type)\r\n" }
            text += "\r\n\(content)\r\n"
        }
        return Data((text + "--\(boundary)--\r\n").utf8)
    }

    private static func snapshot(_ body: Data, boundary: String, headers: [ReceivedHeader] = [], charset: Bool = false) throws
        -> FormSnapshot
    {
        let type = "multipart/form-data; \(charset ? "charset=utf-8; " : "")boundary=\(boundary)"
        return try FormSnapshot(
            method: "POST", url: "http://example.com/upload",
            headers: headers + [ReceivedHeader(name: "Content-Type", value: type)], body: body)
    }

    @Test func boundaryIsToleratedByDefaultAndReportedWhenExact() throws {
        let parts: [(String, String?, String?, String)] = [("a", nil, nil, "1"), ("f", "f.txt", "text/plain", "hi")]
        let one = try Self.snapshot(Self.multipart("XyZ", parts), boundary: "XyZ")
        let two = try Self.snapshot(Self.multipart("AbC", parts), boundary: "AbC")
        #expect(snapshotsMatch(one, two))
        #expect(
            one.differences(from: two, tolerating: .exact) == [FormSnapshotDifference(location: "boundary", lhs: "\"XyZ\"", rhs: "\"AbC\"")]
        )
        #expect(one.fields.map(\.text) == ["1"])
        #expect(one.files.first?.sha256 == SHA256.hex(Data("hi".utf8)))
    }

    @Test func partOrderAcrossNamesOnlyCharsetAndHeaderCase() throws {
        let ordered = try Self.snapshot(
            Self.multipart("B", [("a", nil, nil, "1"), ("b", nil, nil, "2"), ("f[]", "1.txt", nil, "x"), ("f[]", "2.txt", nil, "y")]),
            boundary: "B", headers: [ReceivedHeader(name: "X-API-Key", value: "k")], charset: true)
        let moved = try Self.snapshot(
            Self.multipart("B", [("b", nil, nil, "2"), ("f[]", "1.txt", nil, "x"), ("a", nil, nil, "1"), ("f[]", "2.txt", nil, "y")]),
            boundary: "B", headers: [ReceivedHeader(name: "X-Api-Key", value: "k")])
        #expect(ordered.differences(from: moved, tolerating: .default).count > 3)
        #expect(ordered.matches(moved, tolerating: [.partOrder, .charsetParameter, .headerCase]))
        #expect(
            ordered.differences(from: moved, tolerating: [.partOrder, .charsetParameter]).map(\.location) == ["header X-API-Key name case"])
        #expect(
            ordered.differences(from: moved, tolerating: [.partOrder, .headerCase]).map(\.location) == ["content type parameter charset"])
        let swapped = try Self.snapshot(
            Self.multipart("B", [("a", nil, nil, "1"), ("b", nil, nil, "2"), ("f[]", "2.txt", nil, "y"), ("f[]", "1.txt", nil, "x")]),
            boundary: "B", headers: [ReceivedHeader(name: "X-API-Key", value: "k")], charset: true)
        #expect(!ordered.matches(swapped, tolerating: .all))
    }

    @Test func readableReport() throws {
        let left = try Self.snapshot(
            Self.multipart("B", [("name", nil, nil, "Ben"), ("photo", "a.jpg", "image/jpeg", "abc")]), boundary: "B")
        let right = try Self.snapshot(Self.multipart("B", [("name", nil, nil, "Bob")]), boundary: "B")
        let report = left.diffReport(against: right, labels: ("old", "new"))
        #expect(
            report == """
                2 differences (old ≠ new):
                  part 1 "name" content: old "Ben" ≠ new "Bob", first difference at byte 1
                  part 2 "photo": old "photo" file "a.jpg" (image/jpeg) 3 bytes, sha256 ba7816bf8f01cfea… ≠ new (missing)
                """)
    }

    @Test("a report and a snapshot escape C1 controls (U+009B, the one-byte CSI) as they escape ESC")
    func reportsEscapeC1Controls() throws {
        let csi = "\u{9B}31mred\u{202E}"
        let left = try Self.snapshot(
            Self.multipart("B", [("name", nil, nil, "x" + csi)]), boundary: "B", headers: [ReceivedHeader(name: "X-Note", value: csi)])
        let right = try Self.snapshot(Self.multipart("B", [("name", nil, nil, "y\u{1B}[31mred")]), boundary: "B")
        let report = left.diffReport(against: right)
        for text in [report, left.description] {
            #expect(!text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || $0.value == 0x202E }, "\(text)")
            #expect(text.contains(#"\u{9B}31mred\u{202E}"#), "\(text)")
        }
        #expect(report.contains(#""y\u{1B}[31mred""#), "\(report)")
    }

    @Test func gzipBodiesAreInflatedFirst() throws {
        let plain = Data("a=1&b=x%20y".utf8)
        let headers = [ReceivedHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")]
        let gzip = try DataCompressor.compressData(plain)
        let compressed = try FormSnapshot(
            method: "POST", url: "http://h/", headers: headers + [ReceivedHeader(name: "Content-Encoding", value: "gzip")], body: gzip)
        #expect(compressed.fields.map(\.text) == ["1", "x y"])
        var corrupt = gzip
        corrupt[12] ^= 0xFF
        #expect(throws: FormSnapshotError.self) {
            try FormSnapshot(
                method: "POST", url: "http://h/", headers: headers + [ReceivedHeader(name: "Content-Encoding", value: "gzip")],
                body: corrupt)
        }
    }

    @Test func strictness() throws {
        let body = Self.multipart("B", [("a", nil, nil, "1")])
        #expect(
            throws: FormSnapshotError.malformedBody(
                FormParseError(offset: body.count, reason: "Content-Length says 5 bytes but the body has \(body.count)"))
        ) {
            try Self.snapshot(body, boundary: "B", headers: [ReceivedHeader(name: "Content-Length", value: "5")])
        }
        let unterminated = body.prefix(body.count - 9)  // the closing "\r\n--B--\r\n" cut off
        #expect(throws: FormSnapshotError.malformedBody(FormParseError(offset: 49, reason: "Missing closing boundary --B--"))) {
            try Self.snapshot(Data(unterminated), boundary: "B")
        }
        let badHeader = Data("--B\r\nContent-Disposition form-data\r\n\r\nv\r\n--B--\r\n".utf8)
        #expect(throws: FormSnapshotError.self) { try Self.snapshot(badHeader, boundary: "B") }
        // Preamble and epilogue are tolerated.
        let framed = try Self.snapshot(Data("preamble\r\n".utf8) + body + Data("epilogue".utf8), boundary: "B")
        #expect(framed.fields.map(\.text) == ["1"])
    }

    @Test func rawCaptures() throws {
        let chunked = Data(
            "POST /up?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nTransfer-Encoding: chunked\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n3\r\na=1\r\n4\r\n&b=2\r\n0\r\n\r\n"
                .utf8)
        let capture = try RawHTTPRequest(parsing: chunked)
        #expect(capture.body == Data("a=1&b=2".utf8))
        #expect(capture.url == "http://127.0.0.1:9/up?x=1")
        #expect(try RawHTTPRequest(parsing: capture.serialized()) == capture)
        let snapshot = try FormSnapshot(capture: capture)
        #expect(snapshot.fields.map(\.name) == ["a", "b"])
        #expect(throws: FormParseError(offset: 56, reason: "Content-Length says 9 bytes but the capture has 3 after the head")) {
            try RawHTTPRequest(parsing: Data("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\nX: y\r\n\r\na=1".utf8))
        }
        #expect(throws: FormParseError(offset: 17, reason: "Bad header line: \"Broken header\"")) {
            try RawHTTPRequest(parsing: Data("POST / HTTP/1.1\r\nBroken header\r\n\r\n".utf8))
        }
        #expect(!RawHTTPRequest.looksLikeRequest(Data("--B\r\n".utf8)))
    }

    @Test func fromFormDataRequestAndURLRequest() throws {
        let request = FormDataRequest(url: URL(string: "http://Example.com")!)
        request.setPostValue("x y", forKey: "b")
        request.username = "user"
        request.password = "password"
        let asi = try FormSnapshot(request)
        #expect(asi.url == "http://example.com/")
        #expect(asi.header("Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        #expect(asi.charset == "utf-8")

        var urlRequest = URLRequest(url: URL(string: "http://example.com/")!)
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
        urlRequest.setValue("Basic dXNlcjpwYXNzd29yZA==", forHTTPHeaderField: "Authorization")
        urlRequest.httpBodyStream = InputStream(data: Data("b=x+y".utf8))
        #expect(snapshotsMatch(asi, try FormSnapshot(urlRequest), tolerating: .exact))
    }
}
