// Before (Objective-C, ASIHTTPRequest) — a large photo upload over a network that drops:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setPostValue:@"holiday" forKey:@"album"];
//     [request addFile:@"/path/to/video.mov" forKey:@"video"];
//     [request setNumberOfTimesToRetryOnTimeout:2];   // starts the WHOLE body again each time
//     [request startSynchronous];
//
// AFNetworking had nothing better: a dropped multipart upload restarted from byte zero
// (Alamofire#1293, #2349).
//
// After (Swift, FormDataKit) — beyond both: with `shouldResumeInterruptedUploads` the request
// speaks Resumable Uploads for HTTP (draft-ietf-httpbis-resumable-upload, interop version 6, as
// iOS 18.1's URLSession and Apple's swift-nio-extras server handler do). After a drop it asks the
// server how much arrived and sends only the rest, straight from the parts. A server without
// support makes it an ordinary upload; a transport that cannot resume (URLSessionTransport)
// refuses the setting before sending. The end-to-end proof (Apple's server handler, connections
// cut at random points, sha256 compared) is ReliabilityTests' "Resumable uploads".

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
import Testing

/// The port.
func resumableVideoUpload(of path: String, to url: URL) throws -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.addPostValue("holiday", forKey: "album")
    try request.addFile(path, forKey: "video")
    request.shouldResumeInterruptedUploads = true  // off by default
    request.numberOfTimesToResumeUpload = 5  // default 3
    return request
}

@Suite("27 Resumable upload")
struct ResumableUploadExample {
    @Test func announcedToAServerWithoutSupportItIsAnOrdinaryUpload() async throws {
        try await Example.withDirectory { directory in
            let video = try Example.write(Example.photoBytes, named: "video.mov", in: directory)
            try await Example.withReceiver { receiver in
                let request = try resumableVideoUpload(of: video.path, to: receiver.url("/upload"))
                request.transport = CurlTransport()  // the transport that resumes (Linux's default)
                let response = try await request.start()
                #expect(response.statusCode == 200)
                let received = try #require(receiver.lastRequest)
                #expect(received.header("Upload-Draft-Interop-Version") == "6")
                #expect(received.header("Upload-Complete") == "?1")
                #expect(received.form?.file("video")?.data == Example.photoBytes)
                // The receiver does not answer 104: nothing to resume, nothing resumed.
                #expect(request.uploadResumptionURL == nil)
                #expect(request.uploadResumeCount == 0)
            }
        }
    }

    @Test func aTransportThatCannotResumeRefusesTheSetting() async throws {
        try await Example.withDirectory { directory in
            let video = try Example.write(Example.photoBytes, named: "video.mov", in: directory)
            let request = try resumableVideoUpload(of: video.path, to: Example.uploadURL)
            request.transport = URLSessionTransport()
            var failure: FormDataError?
            do throws(FormDataError) { _ = try await request.start() } catch { failure = error }
            guard case .unableToCreateRequest(let underlying)? = failure else {
                Issue.record("expected unableToCreateRequest, got \(String(describing: failure))")
                return
            }
            #expect(underlying.message.contains("shouldResumeInterruptedUploads"))
        }
    }

    @Test func theAFManagerHasTheSameSwitch() {
        let manager = AFHTTPSessionManager(baseURL: Example.uploadURL)
        #expect(!manager.shouldResumeInterruptedUploads && manager.numberOfTimesToResumeUpload == 3)
        manager.shouldResumeInterruptedUploads = true
        #expect(manager.copy().shouldResumeInterruptedUploads)
    }
}
