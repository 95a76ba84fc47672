// Before (Objective-C, AFNetworking 4) — the S3 recipe (issue #1398): streamed bodies lose their
// Content-Length, so write the body to a file and upload the file:
//
//     NSMutableURLRequest *request = [serializer multipartFormRequestWithMethod:@"POST"
//         URLString:url parameters:@{@"key": @"value"}
//         constructingBodyWithBlock:^(id<AFMultipartFormData> formData) {
//             [formData appendPartWithFileURL:videoURL name:@"video" error:nil];
//         } error:nil];
//     [serializer requestWithMultipartFormRequest:request writingStreamContentsToFile:fileURL
//                               completionHandler:^(NSError *error) {
//         [[manager uploadTaskWithRequest:request fromFile:fileURL progress:nil completionHandler:…] resume];
//     }];
//
// ASIHTTPRequest did this itself: a form with files is spooled to a temp file and sent from it.
//
// After (Swift, FormDataKitAF): the same call, or its `async` variant; then `uploadTask(with:fromFile:)`.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The port: the multipart request, and the copy without a stream after the file is written.
func writeToFile(url: String, video: URL, file: URL) async throws -> (streamed: URLRequest, written: URLRequest) {
    let serializer = AFHTTPRequestSerializer.serializer()
    let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: url, parameters: ["key": "value"]) { formData in
        try formData.appendPart(withFileURL: video, name: "video")
    }
    let written = try await serializer.request(withMultipartForm: request, writingStreamContentsToFile: file)
    return (request, written)
}

@Suite("11 writingStreamContentsToFile, then upload")
struct WriteToFileExample {
    @Test func theFileHoldsTheStreamedBody() async throws {
        try await Example.withDirectory { directory in
            let video = try Example.write(Data(repeating: 0x42, count: 100_000), named: "clip.mp4", in: directory)
            let file = directory.appendingPathComponent("body.multipart")
            let (streamed, written) = try await writeToFile(url: "http://example.com/upload", video: video, file: file)
            #expect(written.httpBodyStream == nil)
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
            #expect(written.value(forHTTPHeaderField: "Content-Length") == size.map(String.init))
            // The file is the stream's body, byte for byte (same boundary).
            #expect(snapshotsMatch(try FormSnapshot(written, bodyFile: file), try FormSnapshot(streamed), tolerating: .exact))
            // ASIFormDataRequest spools the same form itself.
            let asi = FormDataRequest(url: URL(string: "http://example.com/upload")!)
            asi.setPostValue("value", forKey: "key")
            try asi.addFile(video.path, forKey: "video")
            #expect(snapshotsMatch(try FormSnapshot(asi), try FormSnapshot(written, bodyFile: file), tolerating: Example.acrossFacades))
        }
    }

    @Test func uploadedFromTheFile() async throws {
        try await Example.withDirectory { directory in
            let video = try Example.write(Data(repeating: 0x42, count: 100_000), named: "clip.mp4", in: directory)
            let file = directory.appendingPathComponent("body.multipart")
            try await Example.withReceiver { receiver in
                let (_, written) = try await writeToFile(url: receiver.url("/upload").absoluteString, video: video, file: file)
                let status: Int = try await withCheckedThrowingContinuation { continuation in
                    URLSession.shared.uploadTask(with: written, fromFile: file) { _, response, error in
                        if let error {
                            continuation.resume(throwing: error)
                        } else {
                            continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode ?? 0)
                        }
                    }.resume()
                }
                #expect(status == 200)
                let received = try #require(receiver.lastRequest)
                #expect(received.parseError == nil)
                #expect(received.bodyBytes == written.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) })
                #expect(received.form?.file("video")?.size == 100_000)
                #expect(received.form?.value("key") == "value")
            }
        }
    }
}
