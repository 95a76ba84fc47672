// Before (Objective-C, ASIHTTPRequest) — testPUT:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setRequestMethod:@"PUT"];
//     [request setPostValue:@"cheep cheep" forKey:@"hello"];
//     [request startSynchronous];      // PUT kept; a DELETE with a body goes out as POST
//
// After (Swift, FormDataKit): `requestMethod = "PUT"`; the same GET/DELETE/HEAD → POST rule.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port.
func putForm(url: URL, method: String = "PUT") -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.requestMethod = method
    request.setPostValue("cheep cheep", forKey: "hello")
    return request
}

@Suite("04 PUT form")
struct PUTFormExample {
    @Test func legacyBytesAndMethodRules() throws {
        let put = putForm(url: Example.uploadURL)
        #expect(try Example.body(put) == Data("hello=cheep%20cheep".utf8))
        #expect(put.requestMethod == "PUT")
        #expect(put.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        let delete = putForm(url: Example.uploadURL, method: "DELETE")
        try delete.buildPostBody()
        #expect(delete.requestMethod == "POST")
    }

    @Test func sentAsPUTAndSameAsTheAFFacade() async throws {
        try await Example.withReceiver { receiver in
            let request = putForm(url: receiver.url("/put_form_data"))
            Example.prepareToSend(request)
            _ = try await request.start()
            let received = try #require(receiver.lastRequest)
            #expect(received.method == "PUT")
            #expect(received.form?.value("hello") == "cheep cheep")

            let af = try AFHTTPRequestSerializer.serializer().request(
                withMethod: "PUT", urlString: receiver.url("/put_form_data").absoluteString, parameters: ["hello": "cheep cheep"])
            #expect(af.httpBody == Data("hello=cheep%20cheep".utf8))
            #expect(snapshotsMatch(try FormSnapshot(request), try FormSnapshot(af), tolerating: .charsetParameter))
        }
    }
}
