// Before (Objective-C, ASIHTTPRequest): a form upload retried on timeout. If the server had read
// and processed the body and only its answer was slow, the retry processed the upload twice:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setPostValue:@"Ben" forKey:@"name"];
//     [request setFile:@"/tmp/photo.jpg" forKey:@"photo"];
//     [request setNumberOfTimesToRetryOnTimeout:2];
//     [request startAsynchronous];
//
// After (Swift, FormDataKit): the same line keeps ASI's meaning (any timeout is sent again).
// Beyond ASI and AFNetworking, a retry policy retries a POST after its body went out only when it
// carries an `Idempotency-Key` — one per logical upload, the same on every retry — which a server
// that supports the header processes once (the DocC article "Retries that never post twice";
// RetryWireTests runs it against a server that loses answers).

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
import Testing

/// The port: ASI's form, a key for the upload, and the policy in place of the timeout count.
func idempotentUpload(url: URL) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.setPostValue("Ben", forKey: "name")
    request.addData(Data("photo bytes".utf8), withFileName: "photo.jpg", andContentType: "image/jpeg", forKey: "photo")
    request.shouldSendIdempotencyKey = true
    request.retryPolicy = RetryPolicy(maximumRetries: 2, honoursRetryAfter: true)
    return request
}

@Suite("26 Retries that never post twice")
struct IdempotentRetriesExample {
    @Test func theUploadCarriesOneKeyWhichItKeeps() async throws {
        try await Example.withReceiver { receiver in
            let request = idempotentUpload(url: receiver.url("/upload"))
            Example.prepareToSend(request)
            let response = try await request.start()
            #expect(response.statusCode == 200)
            #expect(receiver.requests.count == 1)
            let key = try #require(receiver.lastRequest?.header("Idempotency-Key"))
            #expect(key == request.idempotencyKey)
            #expect(key.count == 38 && key.hasPrefix("\"") && key.hasSuffix("\""))
            #expect(receiver.lastRequest?.form?.value("name") == "Ben")
        }
    }

    @Test func whatThePolicyRetriesAfterTheBodyWentOut() {
        #expect(!RetryPolicy.isSafeToRepeat(method: "POST", carriesIdempotencyKey: false))
        #expect(RetryPolicy.isSafeToRepeat(method: "POST", carriesIdempotencyKey: true))
        #expect(RetryPolicy.isSafeToRepeat(method: "PUT", carriesIdempotencyKey: false))
    }

    @Test func theAFSerializerGivesEachRequestItsOwnKey() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.shouldSendIdempotencyKey = true
        let request = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com/upload", parameters: ["name": "Ben"]
        ) { _ in }
        #expect(request.value(forHTTPHeaderField: "Idempotency-Key")?.count == 38)
    }
}
