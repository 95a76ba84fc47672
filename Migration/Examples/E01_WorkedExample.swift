// Before (Objective-C, ASIHTTPRequest) — the reference's worked example:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setPostValue:@"1" forKey:@"a"];
//     [request setPostValue:@"x y" forKey:@"b"];
//     [request addFile:@"/tmp/f.txt" forKey:@"file"];   // "hi"
//     [request startSynchronous];
//
// After (Swift, FormDataKit): the same calls; `addFile` throws at once for a missing file.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port.
func buildWorkedExample(url: URL, file: String) throws -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.setPostValue("1", forKey: "a")
    request.setPostValue("x y", forKey: "b")
    try request.addFile(file, forKey: "file")
    return request
}

@Suite("01 Worked example: two values and a text file")
struct WorkedExampleExample {
    @Test func legacyBytesWithAFixedBoundary() throws {
        try Example.withDirectory { directory in
            let file = try Example.write(Data("hi".utf8), named: "f.txt", in: directory)
            let request = try buildWorkedExample(url: Example.uploadURL, file: file.path)
            request.multipartBoundary = Example.asiBoundary
            let body = try Example.body(request)
            let b = Example.asiBoundary
            let expected =
                "--\(b)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--\(b)\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx y\r\n--\(b)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--\(b)--\r\n"
            #expect(body == Data(expected.utf8))
            #expect(body.count == 417)
            #expect(request.requestHeaders["Content-Type"] == "multipart/form-data; charset=utf-8; boundary=\(b)")
            #expect(request.requestHeaders["Content-Length"] == "417")
            #expect(request.requestMethod == "POST")
            #expect(request.postFormat == .multipartFormData)
        }
    }

    @Test func sameFormThroughTheAFFacade() throws {
        try Example.withDirectory { directory in
            let file = try Example.write(Data("hi".utf8), named: "f.txt", in: directory)
            let asi = try FormSnapshot(buildWorkedExample(url: Example.uploadURL, file: file.path))
            let serializer = AFHTTPRequestSerializer.serializer()
            let af = try serializer.multipartFormRequest(
                withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: ["a": "1", "b": "x y"]
            ) { form in
                try form.appendPart(withFileURL: file, name: "file")
            }
            #expect(snapshotsMatch(asi, try FormSnapshot(af), tolerating: Example.acrossFacades))
            // Without the charset tolerance the one real header difference shows.
            #expect(asi.differences(from: try FormSnapshot(af)).map(\.location) == ["content type parameter charset"])
        }
    }
}
