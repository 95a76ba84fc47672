// Before (Objective-C, AFNetworking 3) — a voice-memo app that builds the multipart request itself
// and hands it to the session manager's upload task, with a progress bar:
//
//     NSMutableURLRequest *request = [[AFHTTPRequestSerializer serializer]
//         multipartFormRequestWithMethod:@"POST" URLString:uploadURL parameters:@{@"seconds": @"12"}
//         constructingBodyWithBlock:^(id<AFMultipartFormData> formData) {
//             [formData appendPartWithFileURL:memoURL name:@"memo" fileName:@"memo.m4a"
//                                    mimeType:@"audio/mp4" error:nil];
//         } error:nil];
//     NSURLSessionUploadTask *task = [manager uploadTaskWithStreamedRequest:request
//         progress:^(NSProgress *progress) { bar.progress = progress.fractionCompleted; }
//         completionHandler:^(NSURLResponse *response, id responseObject, NSError *error) { … }];
//     [task resume];
//
// After (Swift, FormDataKitAF): `uploadTask(withStreamedRequest:progress:completionHandler:)`, then
// `resume()`. The body goes out with the bytes the serializer wrote and their exact Content-Length
// (streamed from the parts by the default transport; no temporary file, never chunked) — what the
// longer route, `request(withMultipartForm:writingStreamContentsToFile:)` then URLSession's
// `uploadTask(with:fromFile:)`, sends. AF 2 code can keep `AFHTTPRequestOperation(request:)`.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The port's request: the memo and its length as a multipart form.
func memoRequest(to url: URL, memo: URL) throws -> URLRequest {
    try AFHTTPRequestSerializer.serializer().multipartFormRequest(
        withMethod: "POST", urlString: url.absoluteString, parameters: ["seconds": "12"]
    ) { formData in
        try formData.appendPart(withFileURL: memo, name: "memo", fileName: "memo.m4a", mimeType: "audio/mp4")
    }
}

/// The port's upload: the manager's upload task, resumed; returns the last progress fraction and
/// the completion handler's error.
func uploadMemo(_ request: URLRequest, with manager: AFHTTPSessionManager) async -> (fraction: Double, error: (any Error)?) {
    let fraction = Tally(0.0)
    let error: (any Error)? = await withCheckedContinuation { continuation in
        manager.uploadTask(
            withStreamedRequest: request, progress: { progress in fraction.update { $0 = progress.fractionCompleted } },
            completionHandler: { _, _, error in continuation.resume(returning: error) }
        ).resume()
    }
    return (fraction.current, error)
}

@Suite("55.6 uploadTaskWithStreamedRequest: through the session manager")
struct AFStreamedUploadTaskExample {
    @Test func sendsTheBytesOfTheFileRoute() async throws {
        try await Example.withDirectory { directory in
            let memo = try Example.write(Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }), named: "memo.m4a", in: directory)
            try await Example.withReceiver(recordingDirectory: directory.appendingPathComponent("captures")) { receiver in
                let request = try memoRequest(to: receiver.url("/memos"), memo: memo)
                let (fraction, error) = await uploadMemo(request, with: AFHTTPSessionManager(baseURL: nil))
                #expect(error == nil)
                #expect(fraction == 1)
                let received = try #require(receiver.lastRequest)
                #expect(received.contentLength == request.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) })
                #expect(received.header("Transfer-Encoding") == nil)
                #expect(received.form?.value("seconds") == "12")
                #expect(received.form?.file("memo")?.size == 200_000)

                // The longer route's file holds the same bytes as what arrived (same boundary).
                let file = directory.appendingPathComponent("body.multipart")
                _ = try await AFHTTPRequestSerializer.serializer().request(withMultipartForm: request, writingStreamContentsToFile: file)
                let capture = try RawHTTPRequest(contentsOf: URL(fileURLWithPath: try #require(received.capturePath)))
                let sameBytes = try capture.body == Data(contentsOf: file)  // a Bool: no diff of 200 KB when it fails
                #expect(sameBytes)
            }
        }
    }

    @Test func theAF2OperationSendsTheSameRequest() async throws {
        try await Example.withDirectory { directory in
            let memo = try Example.write(Data(repeating: 0x4D, count: 50_000), named: "memo.m4a", in: directory)
            try await Example.withReceiver { receiver in
                let request = try memoRequest(to: receiver.url("/memos"), memo: memo)
                let operation = AFHTTPRequestOperation(request: request)
                let failed: Bool = await withCheckedContinuation { continuation in
                    operation.setCompletionBlockWithSuccess(
                        { _, _ in continuation.resume(returning: false) }, failure: { _, _ in continuation.resume(returning: true) })
                    OperationQueue().addOperation(operation)
                }
                #expect(!failed)
                #expect(receiver.lastRequest?.form?.file("memo")?.size == 50_000)
                #expect(receiver.lastRequest?.header("Transfer-Encoding") == nil)
            }
        }
    }
}
