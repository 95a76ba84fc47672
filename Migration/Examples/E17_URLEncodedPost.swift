// Before (Objective-C, ASIHTTPRequest) — testURLEncodedPost:
//
//     [request setPostValue:@"value1" forKey:@"value1"];
//     [request setPostValue:@"(%20 ? =)" forKey:@"value2"];
//     [request setPostValue:@"£100.00" forKey:@"value3"];
//     [request setPostValue:@"" forKey:@"value4"];
//     [request setPostValue:@"&??aaa=//ciaoèèè" forKey:@"teskey&aa"];
//     [request setShouldStreamPostDataFromDisk:YES];
//     [request setPostFormat:ASIURLEncodedPostFormat];
//
// AFNetworking: [manager POST:@"url-encoded-post" parameters:@{…same…} headers:nil progress:nil …];
//
// After (Swift): the same calls. Only `A–Z a–z 0–9 - . _` stay unescaped in ASI bodies; AF also
// keeps `~ / ?` — different bytes, the same form.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The legacy test values, in order.
let urlEncodedValues: [(String, String)] = [
    ("value1", "value1"), ("value2", "(%20 ? =)"), ("value3", "£100.00"), ("value4", ""), ("teskey&aa", "&??aaa=//ciaoèèè"),
]

/// The port.
func urlEncodedPost() -> FormDataRequest {
    let request = FormDataRequest(url: Example.uploadURL)
    for (key, value) in urlEncodedValues { request.setPostValue(value, forKey: key) }
    request.shouldStreamPostDataFromDisk = true
    request.postFormat = .urlEncoded
    return request
}

@Suite("17 URL-encoded POST")
struct URLEncodedPostExample {
    @Test func legacyBytes() throws {
        let request = urlEncodedPost()
        #expect(
            try Example.body(request)
                == Data(
                    "value1=value1&value2=%28%2520%20%3F%20%3D%29&value3=%C2%A3100.00&value4=&teskey%26aa=%26%3F%3Faaa%3D%2F%2Fciao%C3%A8%C3%A8%C3%A8"
                        .utf8))
        #expect(request.postBodyFilePath != nil)  // streamed from disk, as asked
        // What the legacy server printed.
        let printed = try FormSnapshot(request).fields.map { "\($0.name): \($0.text ?? "")" }.joined(separator: "\r\n")
        #expect(printed == "value1: value1\r\nvalue2: (%20 ? =)\r\nvalue3: £100.00\r\nvalue4: \r\nteskey&aa: &??aaa=//ciaoèèè")
    }

    @Test func differentBytesSameFormThroughAF() throws {
        let af = try AFHTTPRequestSerializer.serializer().request(
            withMethod: "POST", urlString: Example.uploadURL.absoluteString,
            parameters: Dictionary(uniqueKeysWithValues: urlEncodedValues))
        let afBody = String(decoding: af.httpBody ?? Data(), as: UTF8.self)
        #expect(afBody.contains("%26??aaa%3D//ciao"))  // AF leaves / and ? alone
        #expect(try Example.body(urlEncodedPost()) != af.httpBody)
        // AF sorts the keys; ASI keeps call order: tolerate order across names.
        #expect(snapshotsMatch(try FormSnapshot(urlEncodedPost()), try FormSnapshot(af), tolerating: [.charsetParameter, .partOrder]))
    }
}
