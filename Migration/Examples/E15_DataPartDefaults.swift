// Before (Objective-C, ASIHTTPRequest):
//
//     [request setPostValue:@"1" forKey:@"a"];
//     [request setPostValue:@"x y" forKey:@"b"];
//     [request addData:[@"hi" dataUsingEncoding:NSUTF8StringEncoding] forKey:@"file"];
//     // filename="file", Content-Type: application/octet-stream — 430 bytes
//
// After (Swift, FormDataKit): `addData(_:forKey:)`, same defaults. (A nil filename in
// `addData:withFileName:andContentType:forKey:` is `file` too; ASI sent `(null)`.)

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port.
func dataPart() -> FormDataRequest {
    let request = FormDataRequest(url: Example.uploadURL)
    request.setPostValue("1", forKey: "a")
    request.setPostValue("x y", forKey: "b")
    request.addData(Data("hi".utf8), forKey: "file")
    return request
}

@Suite("15 Data part defaults")
struct DataPartDefaultsExample {
    @Test func legacyBytes() throws {
        let request = dataPart()
        request.multipartBoundary = Example.asiBoundary
        let body = try Example.body(request)
        #expect(body.count == 430)
        let text = String(decoding: body, as: UTF8.self)
        #expect(
            text.contains(
                "Content-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nhi\r\n"))
        let nilName = FormDataRequest(url: Example.uploadURL)
        nilName.addData(Data("hi".utf8), withFileName: nil, andContentType: nil, forKey: "file")
        #expect(try FormSnapshot(nilName).files.first?.fileName == "file")
    }

    @Test func sameAsTheAFFacade() throws {
        let af = try AFHTTPRequestSerializer.serializer().multipartFormRequest(
            withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: ["a": "1", "b": "x y"]
        ) { form in
            form.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "file", mimeType: "application/octet-stream")
        }
        #expect(snapshotsMatch(try FormSnapshot(dataPart()), try FormSnapshot(af), tolerating: Example.acrossFacades))
    }
}
