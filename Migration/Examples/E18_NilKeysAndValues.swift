// Before (Objective-C, ASIHTTPRequest) — testAddNilKeysAndValues:
//
//     [request addPostValue:@"value1" forKey:nil];     // ignored
//     [request addPostValue:@"value2" forKey:@"key2"];
//     [request buildPostBody];                          // postBody == "key2=value2"
//
//     [request setPostValue:nil forKey:@"key1"];        // sent empty
//     [request setData:nil forKey:@"file1"];            // an empty file part
//
// AFNetworking: @{@"key1": [NSNull null], @"key2": @"value2"} → "key1&key2=value2" (a bare key).
//
// After (Swift): `nil` keys and values behave as in ASI; `NSNull()` as in AF.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

@Suite("18 nil keys and values")
struct NilKeysAndValuesExample {
    @Test func legacyBytes() throws {
        let request = FormDataRequest(url: URL(string: "http://allseeing-i.com")!)
        request.addPostValue("value1", forKey: nil)
        request.addPostValue("value2", forKey: "key2")
        #expect(try Example.body(request) == Data("key2=value2".utf8))

        let multipart = FormDataRequest(url: Example.uploadURL)
        multipart.setPostValue(nil, forKey: "key1")
        multipart.setPostValue("value2", forKey: "key2")
        multipart.setData(nil, forKey: "file1")
        multipart.setData(Data("hello".utf8), forKey: "file2")
        let snapshot = try FormSnapshot(multipart)
        // What the legacy server echoed.
        let echoed = snapshot.parts.map { "\($0.name): \($0.text ?? "")" }.joined(separator: "\r\n")
        #expect(echoed == "key1: \r\nkey2: value2\r\nfile1: \r\nfile2: hello")
    }

    @Test func aBareAFKeyIsTheSameEmptyValue() throws {
        let af = try AFHTTPRequestSerializer.serializer().request(
            withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: ["key1": NSNull(), "key2": "value2"])
        #expect(af.httpBody == Data("key1&key2=value2".utf8))
        let asi = FormDataRequest(url: Example.uploadURL)
        asi.setPostValue(nil, forKey: "key1")
        asi.setPostValue("value2", forKey: "key2")
        #expect(try Example.body(asi) == Data("key1=&key2=value2".utf8))
        #expect(snapshotsMatch(try FormSnapshot(asi), try FormSnapshot(af), tolerating: .charsetParameter))
    }
}
