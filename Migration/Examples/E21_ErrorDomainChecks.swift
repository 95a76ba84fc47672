// Before (Objective-C, ASIHTTPRequest) — a failure handler that tells errors apart by domain and
// code:
//
//     [request setFailedBlock:^{
//         NSError *error = [request error];
//         if ([[error domain] isEqualToString:NetworkRequestErrorDomain] && [error code] == ASIRequestTimedOutErrorType) {
//             [self scheduleRetry];
//         } else {
//             [self showAlert:[error localizedDescription]];   // "A connection failure occurred", …
//         }
//     }];
//
// After (Swift, FormDataKit): the same checks work on the bridged `NSError` — domain
// `ASIHTTPRequestErrorDomain`, ASI's codes (2 = timed out) and descriptions, the transport's own
// error under `NSUnderlyingErrorKey`. Swift code can match the typed `FormDataError` instead.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

@Suite("21 Error domain and code checks in a failure block")
struct ErrorDomainExample {
    @Test func aTimeoutIsASIHTTPRequestErrorDomainCode2() async throws {
        let seen = Locked<(domain: String, code: Int, text: String)?>(nil)
        try await Example.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/delay/5000"))
            request.transport = CurlTransport()
            request.timeOutSeconds = 0.5
            request.setPostValue("1", forKey: "a")
            request.failedBlock = {
                let error = request.error.map { $0 as NSError }
                seen.withLock { $0 = error.map { ($0.domain, $0.code, $0.localizedDescription) } }
            }
            _ = try? await request.start()
        }
        let error = try #require(seen.current)
        #expect(error.domain == "ASIHTTPRequestErrorDomain")
        #expect(error.code == 2)
        #expect(error.text == "The request timed out")
    }
}
