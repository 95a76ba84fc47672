// Before (Objective-C, AFNetworking 4) — the reference's worked multipart body:
//
//     NSMutableURLRequest *request = [[AFHTTPRequestSerializer serializer]
//         multipartFormRequestWithMethod:@"POST" URLString:@"http://example.com/upload"
//         parameters:@{@"a": @"1"}
//         constructingBodyWithBlock:^(id<AFMultipartFormData> formData) {
//             [formData appendPartWithFileData:[@"hi" dataUsingEncoding:NSUTF8StringEncoding]
//                                         name:@"file" fileName:@"f.txt" mimeType:@"text/plain"];
//         } error:nil];
//
// After (Swift, FormDataKitAF): the same names as Swift imported them; the block may `throw`.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The port.
func constructingBody(serializer: AFHTTPRequestSerializer) throws -> URLRequest {
    try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: ["a": "1"]) { formData in
        formData.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "f.txt", mimeType: "text/plain")
    }
}

@Suite("08 AF POST with constructingBody")
struct ConstructingBodyExample {
    static let legacyHex =
        "2d2d426f756e646172792b303132333435363738394142434445460d0a436f6e74656e742d446973706f736974696f6e3a20666f726d2d646174613b206e616d653d2261220d0a0d0a310d0a2d2d426f756e646172792b303132333435363738394142434445460d0a436f6e74656e742d446973706f736974696f6e3a20666f726d2d646174613b206e616d653d2266696c65223b2066696c656e616d653d22662e747874220d0a436f6e74656e742d547970653a20746578742f706c61696e0d0a0d0a68690d0a2d2d426f756e646172792b303132333435363738394142434445462d2d0d0a"

    @Test func legacyBytesWithAFixedBoundary() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.multipartBoundary = Example.afBoundary
        let request = try constructingBody(serializer: serializer)
        let snapshot = try FormSnapshot(request)
        #expect(snapshot.parts.count == 2)
        let stream = try #require(request.httpBodyStream as? AFMultipartBodyStream)
        let body = try stream.bodySource.readAll()
        #expect(body.map { String(format: "%02x", $0) }.joined() == Self.legacyHex)
        #expect(body.count == 231)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=\(Example.afBoundary)")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == "231")
        #expect(request.httpBody == nil)
    }

    @Test func sameFormThroughTheASIFacade() throws {
        let af = try FormSnapshot(constructingBody(serializer: AFHTTPRequestSerializer.serializer()))
        let asi = FormDataRequest(url: URL(string: "http://example.com/upload")!)
        asi.setPostValue("1", forKey: "a")
        asi.addData(Data("hi".utf8), withFileName: "f.txt", andContentType: "text/plain", forKey: "file")
        #expect(snapshotsMatch(af, try FormSnapshot(asi), tolerating: Example.acrossFacades))
    }
}
