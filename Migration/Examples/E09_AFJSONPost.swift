// Before (Objective-C, AFNetworking 4) — T-JSON test 1:
//
//     AFJSONRequestSerializer *serializer = [AFJSONRequestSerializer serializer];
//     NSURLRequest *request = [serializer requestWithMethod:@"POST" URLString:@"https://httpbin.org"
//                                                parameters:@{@"key": @"value"} error:&error];
//     // body {"key":"value"}, Content-Type: application/json
//
// ASIHTTPRequest had no JSON serializer; ASI code did it by hand:
//
//     [request appendPostData:[NSJSONSerialization dataWithJSONObject:params options:0 error:nil]];
//     [request addRequestHeader:@"Content-Type" value:@"application/json"];
//
// After (Swift, FormDataKitAF): `AFJSONRequestSerializer.serializer()`, `request(withMethod:…)`
// throws instead of filling an NSError**. The hand-made Foundation request is the other side.

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
func jsonPost(_ parameters: Any) throws -> URLRequest {
    try AFJSONRequestSerializer.serializer().request(withMethod: "POST", urlString: "https://httpbin.org", parameters: parameters)
}

@Suite("09 AF JSON POST")
struct JSONPostExample {
    @Test func legacyBytes() throws {
        let request = try jsonPost(["key": "value"])
        #expect(request.httpBody == Data(#"{"key":"value"}"#.utf8))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(try jsonPost([["key": "value"]]).httpBody == Data(#"[{"key":"value"}]"#.utf8))
        // Not valid JSON (a set): AF's error domain, code -1016.
        #expect(throws: AFURLRequestSerializationError.self) { try jsonPost(["key": Set(["value"])]) }
    }

    @Test func sameAsTheHandMadeRequest() throws {
        let parameters: [String: Any] = ["name": "Ben", "tags": ["a", "b"], "age": 42]
        var byHand = URLRequest(url: URL(string: "https://httpbin.org")!)
        byHand.httpMethod = "POST"
        byHand.setValue("application/json", forHTTPHeaderField: "Content-Type")
        byHand.httpBody = try JSONSerialization.data(withJSONObject: parameters, options: [.sortedKeys])
        let af = try FormSnapshot(jsonPost(parameters))
        // JSON bodies compare as JSON values: object key order does not matter.
        #expect(af.bodyKind == .other)
        #expect(snapshotsMatch(af, try FormSnapshot(byHand), tolerating: .exact))
        byHand.httpBody = try JSONSerialization.data(withJSONObject: ["name": "Bob"])
        #expect(af.differences(from: try FormSnapshot(byHand)).map(\.location) == ["body bytes"])
    }
}
