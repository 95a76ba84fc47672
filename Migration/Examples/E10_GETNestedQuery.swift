// Before (Objective-C, AFNetworking 4):
//
//     [manager GET:@"search"
//       parameters:@{@"user": @{@"name": @"x", @"age": @3}, @"ids": @[@1, @2]}
//          headers:nil progress:nil success:… failure:…];
//     // GET …/search?ids%5B%5D=1&ids%5B%5D=2&user%5Bage%5D=3&user%5Bname%5D=x
//
// ASIHTTPRequest had no query builder (URLs were formatted by hand), and a form with GET went
// out as POST; the nested keys were spelled out: [request addPostValue:@"3" forKey:@"user[age]"].
//
// After (Swift, FormDataKitAF): the same dictionary; keys sorted, arrays as `[]`, brackets escaped.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The nested parameters.
func nestedParameters() -> [String: Any] { ["user": ["name": "x", "age": 3], "ids": [1, 2]] }

/// The port.
func nestedQuery(serializer: AFHTTPRequestSerializer = AFHTTPRequestSerializer.serializer()) throws -> URLRequest {
    try serializer.request(withMethod: "GET", urlString: "http://example.com/search", parameters: nestedParameters())
}

@Suite("10 GET with nested query parameters")
struct NestedQueryExample {
    @Test func legacyQuery() throws {
        let request = try nestedQuery()
        #expect(request.url?.query == "ids%5B%5D=1&ids%5B%5D=2&user%5Bage%5D=3&user%5Bname%5D=x")
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(AFQueryStringFromParameters(["a": [["b": 1], ["c": 2]]]) == "a%5B%5D%5Bb%5D=1&a%5B%5D%5Bc%5D=2")
    }

    @Test func theSamePairsAsABodyMatchTheASIForm() throws {
        let af = try AFHTTPRequestSerializer.serializer().request(
            withMethod: "POST", urlString: "http://example.com/search", parameters: nestedParameters())
        let asi = FormDataRequest(url: URL(string: "http://example.com/search")!)
        for (key, value) in [("ids[]", "1"), ("ids[]", "2"), ("user[age]", "3"), ("user[name]", "x")] {
            asi.addPostValue(value, forKey: key)
        }
        // Same escaping for these characters, so even the bytes agree.
        #expect(try Example.body(asi) == af.httpBody)
        #expect(snapshotsMatch(try FormSnapshot(asi), try FormSnapshot(af), tolerating: .charsetParameter))
    }
}
