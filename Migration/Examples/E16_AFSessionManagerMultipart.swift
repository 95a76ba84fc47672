// Before (Objective-C, AFNetworking 4) — T-SM testPOSTWithConstructingBody:
//
//     AFHTTPSessionManager *manager = [[AFHTTPSessionManager alloc] initWithBaseURL:baseURL];
//     [manager POST:@"post" parameters:@{@"key": @"value"} headers:@{@"field": @"value"}
//         constructingBodyWithBlock:^(id<AFMultipartFormData> formData) {
//             [formData appendPartWithFileData:[@"Data" dataUsingEncoding:NSUTF8StringEncoding]
//                                         name:@"DataName" fileName:@"DataFileName" mimeType:@"data"];
//         } progress:nil success:^(NSURLSessionDataTask *task, id responseObject) { … } failure:nil];
//
// After (Swift, FormDataKitAF): `post(_:parameters:headers:constructingBodyWith:progress:success:failure:)`.
// The body is spooled and sent with an exact Content-Length (AF streamed it, chunked on Linux).

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port: starts the upload and returns whether it succeeded.
func managerMultipart(_ manager: AFHTTPSessionManager) async -> Bool {
    await withCheckedContinuation { continuation in
        _ = manager.post(
            "post", parameters: ["key": "value"], headers: ["field": "value"],
            constructingBodyWith: { formData in
                formData.appendPart(withFileData: Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
            }, progress: nil, success: { _, _ in continuation.resume(returning: true) },
            failure: { _, _ in continuation.resume(returning: false) })
    }
}

@Suite("16 AF session manager multipart POST")
struct SessionManagerMultipartExample {
    @Test func arrivesWithTheLegacyLengthAndMatchesTheASIForm() async throws {
        try await Example.withDirectory { directory in
            try await Example.withReceiver(recordingDirectory: directory) { receiver in
                let manager = AFHTTPSessionManager(baseURL: receiver.baseURL, sessionConfiguration: nil, transport: Example.transport)
                #expect(await managerMultipart(manager))
                let received = try #require(receiver.lastRequest)
                #expect(received.bodyBytes == 244)  // the reference's deterministic length
                #expect(received.header("field") == "value")
                #expect(received.header("Transfer-Encoding") == nil)
                let capture = try FormSnapshot(contentsOfCapture: URL(fileURLWithPath: try #require(received.capturePath)))
                #expect(capture.files.first?.content == Data("Data".utf8))

                // The same upload through the ASI façade.
                let asi = FormDataRequest(url: receiver.url("/post"))
                asi.setPostValue("value", forKey: "key")
                asi.addData(Data("Data".utf8), withFileName: "DataFileName", andContentType: "data", forKey: "DataName")
                asi.addRequestHeader("field", value: "value")
                // Header names may come back capitalized (`Field`) through URLRequest on Linux.
                #expect(snapshotsMatch(capture, try FormSnapshot(asi), tolerating: Example.acrossFacades.union(.headerCase)))
            }
        }
    }
}
