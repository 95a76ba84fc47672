// Before (Objective-C, ASIHTTPRequest) — a PUT of a file (a photo to a WebDAV or S3-style URL):
//
//     ASIHTTPRequest *request = [ASIHTTPRequest requestWithURL:url];
//     [request setRequestMethod:@"PUT"];
//     [request setShouldStreamPostDataFromDisk:YES];
//     [request setPostBodyFilePath:@"/path/to/photo.jpg"];
//     [request addRequestHeader:@"Content-Type" value:@"image/jpeg"];
//     [request startSynchronous];
//
// AFNetworking — the same upload:
//
//     NSMutableURLRequest *put = [NSMutableURLRequest requestWithURL:url];
//     put.HTTPMethod = @"PUT";
//     [put setValue:@"image/jpeg" forHTTPHeaderField:@"Content-Type"];
//     [[manager uploadTaskWithRequest:put fromFile:fileURL progress:nil completionHandler:…] resume];
//
// After (Swift, FormDataKit): `postBodyFilePath = path` makes the file the raw body: sent as it
// is, with its exact Content-Length, read while sending (never loaded whole), no Content-Type of
// its own (set one). A file that changes size before the send fails it rather than send other bytes.

import FormDataKit
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The port.
func rawPUT(of path: String, to url: URL) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.requestMethod = "PUT"
    request.postBodyFilePath = path
    request.addRequestHeader("Content-Type", value: "image/jpeg")
    return request
}

@Suite("22 Raw PUT of a file")
struct RawPUTOfFileExample {
    @Test func theFileIsTheBody() throws {
        try Example.withDirectory { directory in
            let photo = try Example.write(Example.photoBytes, named: "photo.jpg", in: directory)
            let request = rawPUT(of: photo.path, to: Example.uploadURL)
            try request.buildPostBody()
            #expect(request.postBodyFilePath == photo.path)  // reads back as set, as in ASI
            #expect(request.postLength == UInt64(Example.photoBytes.count))
            #expect(request.requestMethod == "PUT")
            #expect(request.requestHeaders == ["Content-Type": "image/jpeg", "Content-Length": "\(Example.photoBytes.count)"])
            #expect(try request.bodySource?.readAll() == Example.photoBytes)
        }
    }

    @Test func sentExactlyAndSameAsTheAFUpload() async throws {
        try await Example.withDirectory { directory in
            let photo = try Example.write(Example.photoBytes, named: "photo.jpg", in: directory)
            try await Example.withReceiver { receiver in
                let request = rawPUT(of: photo.path, to: receiver.url("/photos/1.jpg"))
                Example.prepareToSend(request)
                let response = try await request.start()
                #expect(response.statusCode == 200)
                let received = try #require(receiver.lastRequest)
                #expect(received.method == "PUT")
                #expect(received.header("Content-Type") == "image/jpeg")
                #expect(received.contentLength == Example.photoBytes.count)
                #expect(received.bodySHA256 == SHA256.hex(Example.photoBytes))
                // The file is the caller's: never removed by the send.
                #expect(FileManager.default.fileExists(atPath: photo.path))

                // The AF port's request (`uploadTaskWithRequest:fromFile:`) reads the same.
                var put = URLRequest(url: receiver.url("/photos/1.jpg"))
                put.httpMethod = "PUT"
                put.setValue("image/jpeg", forHTTPHeaderField: "Content-Type")
                #expect(snapshotsMatch(try FormSnapshot(request), try FormSnapshot(put, bodyFile: photo)))
            }
        }
    }
}
