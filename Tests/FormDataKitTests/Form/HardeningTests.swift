@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// NUL in multipart names and filenames; redacting values from the debug body log.
@Suite("Hardening: NUL in names, debug log redaction")
struct HardeningTests {
    static let url = URL(string: "http://127.0.0.1/x")!

    @Test("a NUL in a multipart field name or filename is refused, naming the field")
    func nulRefused() throws {
        let name = FormDataRequest(url: Self.url)
        name.postFormat = .multipartFormData
        name.setPostValue("v", forKey: "pass\u{0}word")
        #expect(throws: FormDataError.invalidHeaderValue(field: "pass\u{0}word", value: "form-data; name=\"pass\u{0}word\"")) {
            try name.buildPostBody()
        }
        let file = FormDataRequest(url: Self.url)
        file.addData(Data("x".utf8), withFileName: "evil.php\u{0}.jpg", andContentType: "image/jpeg", forKey: "photo")
        #expect(
            throws: FormDataError.invalidHeaderValue(field: "photo", value: "form-data; name=\"photo\"; filename=\"evil.php\u{0}.jpg\"")
        ) {
            try file.buildPostBody()
        }
        // URL-encoded, a NUL is just a byte to escape.
        let encoded = FormDataRequest(url: Self.url)
        encoded.setPostValue("v", forKey: "a\u{0}b")
        try encoded.buildPostBody()
        #expect(encoded.postBody == Data("a%00b=v".utf8))
    }

    @Test("debugBodyRedactedFields hides those values in the debug log, not in the body (URL-encoded and multipart)")
    func redaction() throws {
        for multipart in [false, true] {
            let request = FormDataRequest(url: Self.url)
            request.shouldLogDebugBody = true
            request.debugBodyRedactedFields = ["password"]
            request.postFormat = multipart ? .multipartFormData : .urlEncoded
            request.setPostValue("alice", forKey: "user")
            request.setPostValue("s3cret!", forKey: "password")
            try request.buildPostBody()
            let log = try #require(request.debugBodyString)
            #expect(!log.contains("s3cret"), "\(log)")
            #expect(log.contains("[redacted]"))
            #expect(log.contains("alice"))
            let body = try #require(request.bodySource).readAll()
            #expect(ByteSearch.contains(body, Array((multipart ? "s3cret!" : "s3cret%21").utf8)))
        }
    }
}
