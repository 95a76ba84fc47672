// Before (Objective-C, ASIHTTPRequest) — testUploadProgress / BlocksTests:
//
//     [request setUploadProgressDelegate:progressView];     // setProgress: reaches 1.0
//     [request setBytesSentBlock:^(unsigned long long size, unsigned long long total) {
//         sent += size;                                      // adds up to postLength
//     }];
//     [request startSynchronous];
//
// AFNetworking:
//
//     [manager POST:@"post" parameters:payload headers:nil
//          progress:^(NSProgress *p) { fraction = p.fractionCompleted; } success:… failure:…];
//
// After (Swift): `bytesSentBlock` and `uploadProgress` (a `Progress`) on FormDataRequest; the
// same `progress:` closure on FormDataKitAF's session manager.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port: a 64 KiB form whose progress is tallied.
func progressUpload(url: URL, sent: Tally<UInt64>) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.setPostValue(String(repeating: "AFNetworking", count: 5462), forKey: "payload")
    request.bytesSentBlock = { size, _ in sent.update { $0 += size } }
    return request
}

@Suite("06 Upload progress")
struct UploadProgressExample {
    @Test func asiProgressAddsUpToTheBody() async throws {
        try await Example.withReceiver { receiver in
            let sent = Tally<UInt64>(0)
            let request = progressUpload(url: receiver.url("/ignore"), sent: sent)
            Example.prepareToSend(request)
            _ = try await request.start()
            #expect(request.uploadProgress.fractionCompleted == 1.0)
            #expect(sent.current == request.postLength)
            #expect(request.totalBytesSent == request.postLength)
        }
    }

    @Test func afProgressReachesOneForTheSameBody() async throws {
        try await Example.withReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: receiver.baseURL, sessionConfiguration: nil, transport: Example.transport)
            let fraction = Tally<Double>(0)
            let payload = String(repeating: "AFNetworking", count: 5462)
            let ok: Bool = await withCheckedContinuation { continuation in
                _ = manager.post(
                    "ignore", parameters: ["payload": payload], headers: nil,
                    progress: { progress in fraction.update { $0 = max($0, progress.fractionCompleted) } },
                    success: { _, _ in continuation.resume(returning: true) },
                    failure: { _, _ in continuation.resume(returning: false) })
            }
            #expect(ok)
            #expect(fraction.current == 1.0)
            #expect(receiver.lastRequest?.form?.value("payload") == payload)
            // Both façades build the same form.
            let asi = try FormSnapshot(progressUpload(url: receiver.url("/ignore"), sent: Tally(0)))
            let af = try manager.requestSerializer.request(
                withMethod: "POST", urlString: receiver.url("/ignore").absoluteString, parameters: ["payload": payload])
            #expect(snapshotsMatch(asi, try FormSnapshot(af), tolerating: .charsetParameter))
        }
    }
}
