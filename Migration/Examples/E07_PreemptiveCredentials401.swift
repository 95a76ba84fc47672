// Before (Objective-C, ASIHTTPRequest) — testPOSTWithAuthentication: the first attempt gets a 401,
// the delegate supplies credentials, ASI re-sends the same body (issue #3: the temp body had to
// survive the 401):
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setPostValue:@"This is the first item" forKey:@"first"];
//     [request setData:[@"This is the second item" dataUsingEncoding:NSUTF8StringEncoding] forKey:@"second"];
//     [request setDelegate:self];
//     - (void)authenticationNeededForRequest:(ASIHTTPRequest *)request {
//         [request setUsername:@"secret_username"]; [request setPassword:@"secret_password"];
//         [request retryUsingSuppliedCredentials];
//     }
//
// After (Swift, FormDataKit): no delegate round trip. The port sets the credentials before
// sending; Basic goes pre-emptively (`shouldPresentCredentialsBeforeChallenge`, default true), so
// against a Basic realm the body goes out once. (A Digest or NTLM challenge is answered by the
// curl transport, re-sending the body from its parts: RealServerNetworkTests.) A 401 that stays
// fails with `authenticationNeeded` (ASI code 3).

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port.
func authenticatedPost(url: URL, username: String?, password: String?) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.setPostValue("This is the first item", forKey: "first")
    request.setData(Data("This is the second item".utf8), forKey: "second")
    request.username = username
    request.password = password
    return request
}

@Suite("07 401: pre-emptive credentials")
struct PreemptiveCredentialsExample {
    @Test func withoutCredentialsTheRequestFailsWithCode3() async throws {
        try await Example.withReceiver { receiver in
            let request = authenticatedPost(url: receiver.url("/auth/secret_username/secret_password"), username: nil, password: nil)
            Example.prepareToSend(request)
            do {
                _ = try await request.start()
                Issue.record("a 401 should fail the request")
            } catch {
                #expect((error as? FormDataError)?.asiErrorCode == 3)
            }
        }
    }

    @Test func withCredentialsTheBodyGoesOutOnce() async throws {
        try await Example.withReceiver { receiver in
            let url = receiver.url("/auth/secret_username/secret_password")
            let request = authenticatedPost(url: url, username: "secret_username", password: "secret_password")
            Example.prepareToSend(request)
            let response = try await request.start()
            #expect(response.statusCode == 200)
            #expect(receiver.requests.count == 1)
            let form = try #require(receiver.lastRequest?.form)
            // What the legacy server printed.
            #expect(
                "\(form.value("first") ?? "")\r\n\(String(decoding: form.file("second")?.data ?? Data(), as: UTF8.self))"
                    == "This is the first item\r\nThis is the second item")

            // AF: the serializer's Authorization header; same form, same header.
            let serializer = AFHTTPRequestSerializer.serializer()
            serializer.setAuthorizationHeaderFieldWithUsername("secret_username", password: "secret_password")
            let af = try serializer.multipartFormRequest(
                withMethod: "POST", urlString: url.absoluteString,
                parameters: ["first": "This is the first item"]
            ) { form in
                form.appendPart(
                    withFileData: Data("This is the second item".utf8), name: "second", fileName: "file",
                    mimeType: "application/octet-stream")
            }
            let asi = try FormSnapshot(request)
            #expect(asi.header("Authorization") == "Basic c2VjcmV0X3VzZXJuYW1lOnNlY3JldF9wYXNzd29yZA==")
            #expect(snapshotsMatch(asi, try FormSnapshot(af), tolerating: Example.acrossFacades))
        }
    }
}
