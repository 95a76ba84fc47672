// Before (Objective-C, ASIHTTPRequest): compile with DEBUG_FORM_DATA_REQUEST 1 in
// ASIHTTPRequestConfig.h, and every built form body is logged with NSLog:
//
//     ==== Building a multipart/form-data body ====
//     --B … [2 bytes of data from file '/tmp/f.txt'] …
//     ==== End of multipart/form-data body ====
//
// After (Swift, FormDataKit): a runtime switch — `FormDataRequest.debugFormDataRequests = true`
// for all requests or `request.shouldLogDebugBody = true` for one; the text is in
// `debugBodyString`, on standard error, and in swift-log at debug level.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

@Suite("14 Debug body log")
struct DebugBodyLogExample {
    @Test func legacyLogText() throws {
        try Example.withDirectory { directory in
            let file = try Example.write(Data("hi".utf8), named: "f.txt", in: directory)
            let request = try buildWorkedExample(url: Example.uploadURL, file: file.path)
            request.multipartBoundary = Example.asiBoundary
            request.shouldLogDebugBody = true
            try request.buildPostBody()
            let b = Example.asiBoundary
            let expected =
                "\r\n==== Building a multipart/form-data body ====\r\n--\(b)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--\(b)\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx y\r\n--\(b)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\n[2 bytes of data from file '\(file.path)']\r\n--\(b)--\r\n==== End of multipart/form-data body ====\r\n"
            #expect(request.debugBodyString == expected)

            let encoded = FormDataRequest(url: Example.uploadURL)
            encoded.shouldLogDebugBody = true
            encoded.setPostValue("1", forKey: "a")
            try encoded.buildPostBody()
            #expect(
                encoded.debugBodyString
                    == "\r\n==== Building an application/x-www-form-urlencoded body ====\r\na=1\r\n==== End of application/x-www-form-urlencoded body ====\r\n"
            )
        }
    }

    @Test func loggingDoesNotChangeTheBody() throws {
        try Example.withDirectory { directory in
            let file = try Example.write(Data("hi".utf8), named: "f.txt", in: directory)
            let logged = try buildWorkedExample(url: Example.uploadURL, file: file.path)
            logged.shouldLogDebugBody = true
            let quiet = try buildWorkedExample(url: Example.uploadURL, file: file.path)
            #expect(snapshotsMatch(try FormSnapshot(logged), try FormSnapshot(quiet)))
            // AFNetworking had no body log; its form is the same one.
            let af = try AFHTTPRequestSerializer.serializer().multipartFormRequest(
                withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: ["a": "1", "b": "x y"]
            ) { form in try form.appendPart(withFileURL: file, name: "file") }
            #expect(snapshotsMatch(try FormSnapshot(logged), try FormSnapshot(af), tolerating: Example.acrossFacades))
        }
    }
}
