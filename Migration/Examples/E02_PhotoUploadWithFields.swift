// Before (Objective-C, ASIHTTPRequest):
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:
//         [NSURL URLWithString:@"http://example.com/profile/photo"]];
//     [request setPostValue:@"Ben" forKey:@"first_name"];
//     [request setPostValue:@"Copsey" forKey:@"last_name"];
//     [request addFile:photoPath forKey:@"photo"];          // image/jpeg from the extension
//     [request setDelegate:self];
//     [request startAsynchronous];
//
// After (Swift, FormDataKit): `try await request.start()` (or keep `startAsynchronous()` and the
// delegate). The photo is spooled with the form to a private temp file and sent with its exact
// Content-Length.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port.
func photoUpload(to url: URL, photoPath: String) throws -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.setPostValue("Ben", forKey: "first_name")
    request.setPostValue("Copsey", forKey: "last_name")
    try request.addFile(photoPath, forKey: "photo")
    return request
}

@Suite("02 Photo upload with fields")
struct PhotoUploadExample {
    @Test func legacySemantics() throws {
        try Example.withDirectory { directory in
            let photo = try Example.write(Example.photoBytes, named: "me.jpg", in: directory)
            let request = try photoUpload(to: Example.uploadURL, photoPath: photo.path)
            let snapshot = try FormSnapshot(request)
            #expect(snapshot.fields.map(\.name) == ["first_name", "last_name"])
            #expect(snapshot.fields.map(\.text) == ["Ben", "Copsey"])
            #expect(snapshot.files.count == 1)
            #expect(snapshot.files.first?.fileName == "me.jpg")
            #expect(snapshot.files.first?.contentType == "image/jpeg")
            #expect(snapshot.files.first?.content == Example.photoBytes)
            #expect(request.postBodyFilePath != nil)  // files force a spooled body, as in ASI
        }
    }

    @Test func arrivesAsBuiltAndMatchesTheAFFacade() async throws {
        try await Example.withDirectory { directory in
            let photo = try Example.write(Example.photoBytes, named: "me.jpg", in: directory)
            let captures = directory.appendingPathComponent("captures")
            try await Example.withReceiver(recordingDirectory: captures) { receiver in
                let request = try photoUpload(to: receiver.url("/profile/photo"), photoPath: photo.path)
                Example.prepareToSend(request)
                let response = try await request.start()
                #expect(response.statusCode == 200)
                let received = try #require(receiver.lastRequest)
                #expect(received.parseError == nil)
                #expect(received.form?.file("photo")?.sha256 == SHA256.hex(Example.photoBytes))
                // What went over the wire is what the request built.
                let capture = try FormSnapshot(contentsOfCapture: URL(fileURLWithPath: try #require(received.capturePath)))
                #expect(snapshotsMatch(capture, try FormSnapshot(request)))

                let serializer = AFHTTPRequestSerializer.serializer()
                let af = try serializer.multipartFormRequest(
                    withMethod: "POST", urlString: receiver.url("/profile/photo").absoluteString,
                    parameters: ["first_name": "Ben", "last_name": "Copsey"]
                ) { form in
                    try form.appendPart(withFileURL: photo, name: "photo")
                }
                #expect(snapshotsMatch(capture, try FormSnapshot(af), tolerating: Example.acrossFacades))
            }
        }
    }
}
