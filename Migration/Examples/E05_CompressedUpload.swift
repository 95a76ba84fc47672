// Before (Objective-C, ASIHTTPRequest) — testCompressedBody, as a form:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setRequestMethod:@"PUT"];
//     [request setShouldCompressRequestBody:YES];
//     [request setShouldStreamPostDataFromDisk:YES];
//     [request setPostValue:content forKey:@"content"];
//
// After (Swift, FormDataKit): the same settings. `Content-Encoding: gzip` goes out only with a
// body, and the body is compressed in one pass (no uncompressed spool).

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The legacy test content.
let compressedExampleContent = "This is the test content. This is the test content. This is the test content. This is the test content."

/// The port.
func compressedUpload(url: URL, compress: Bool = true) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.requestMethod = "PUT"
    request.shouldCompressRequestBody = compress
    request.shouldStreamPostDataFromDisk = true
    request.setPostValue(compressedExampleContent, forKey: "content")
    return request
}

@Suite("05 Compressed upload")
struct CompressedUploadExample {
    @Test func gzipBodyInflatesToTheSameForm() throws {
        let compressed = compressedUpload(url: Example.uploadURL)
        try compressed.buildPostBody()
        #expect(compressed.requestHeaders["Content-Encoding"] == "gzip")
        let path = try #require(compressed.compressedPostBodyFilePath)
        let gzip = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(Array(gzip.prefix(3)) == [0x1F, 0x8B, 0x08])  // compare by inflating, never byte for byte
        #expect(compressed.postLength == UInt64(gzip.count))
        // The snapshot inflates: the only difference from the plain request is the header.
        let plain = compressedUpload(url: Example.uploadURL, compress: false)
        let differences = try FormSnapshot(compressed).differences(from: try FormSnapshot(plain))
        #expect(differences == [FormSnapshotDifference(location: "header Content-Encoding", lhs: "\"gzip\"", rhs: "(missing)")])
        // AFNetworking has no request compression: the AF form is the plain one.
        let af = try AFHTTPRequestSerializer.serializer().request(
            withMethod: "PUT", urlString: Example.uploadURL.absoluteString, parameters: ["content": compressedExampleContent])
        #expect(snapshotsMatch(try FormSnapshot(plain), try FormSnapshot(af), tolerating: .charsetParameter))
    }

    @Test func theReceiverInflatesIt() async throws {
        try await Example.withReceiver { receiver in
            let request = compressedUpload(url: receiver.url("/compressed_post_body"))
            Example.prepareToSend(request)
            try request.buildPostBody()
            let compressedLength = request.postLength  // the sent body is released after the send
            _ = try await request.start()
            let received = try #require(receiver.lastRequest)
            #expect(received.header("Content-Encoding") == "gzip")
            #expect(received.bodyBytes == Int(compressedLength))
            #expect(received.form?.value("content") == compressedExampleContent)
        }
    }
}
