import FormDataKit
import FormDataKitAF
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The serializer rules of the reference (§2.3, §2.5–§2.7) beyond AFNetworking's own tests.
@Suite("AFHTTPRequestSerializer behaviour")
struct AFHTTPRequestSerializerBehaviourTests {
    @Test func defaultsMatchAFNetworking() {
        let serializer = AFHTTPRequestSerializer.serializer()
        #expect(serializer.stringEncoding == .utf8)
        #expect(serializer.httpMethodsEncodingParametersInURI == ["GET", "HEAD", "DELETE"])
        #expect(serializer.timeoutInterval == nil)
        #expect(serializer.allowsCellularAccess == nil)
        let language = serializer.value(forHTTPHeaderField: "Accept-Language")
        #expect(language != nil)
        #expect(language?.contains(";q=1") == true)
    }

    @Test func acceptLanguageListsAtMostSixLanguagesDownToHalf() {
        let serializer = AFHTTPRequestSerializer.serializer()
        let value = serializer.value(forHTTPHeaderField: "Accept-Language") ?? ""
        let entries = value.components(separatedBy: ", ")
        #expect(entries.count <= 6)
        #expect(entries.first?.hasSuffix(";q=1") == true)
    }

    @Test func deleteParametersGoToTheQueryAndOthersToTheBody() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        let delete = try serializer.request(withMethod: "DELETE", urlString: "http://example.com/r", parameters: ["key": "value"])
        #expect(delete.url?.absoluteString == "http://example.com/r?key=value")
        #expect(delete.httpBody == nil)
        #expect(delete.value(forHTTPHeaderField: "Content-Type") == nil)
        for method in ["POST", "PUT", "PATCH"] {
            let request = try serializer.request(withMethod: method, urlString: "http://example.com/r", parameters: ["key": "value"])
            #expect(request.httpMethod == method)
            #expect(request.httpBody == Data("key=value".utf8))
            #expect(request.url?.absoluteString == "http://example.com/r")
        }
    }

    @Test func methodMatchingUppercasesTheRequestMethod() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        let request = try serializer.request(withMethod: "get", urlString: "http://example.com", parameters: ["a": "b"])
        #expect(request.url?.query == "a=b")
    }

    @Test func queryIsAppendedWithAmpersandWhenTheURLHasOne() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com/p?x=1", parameters: ["a": "b"])
        #expect(request.url?.absoluteString == "http://example.com/p?x=1&a=b")
        let bare = try serializer.request(withMethod: "GET", urlString: "http://example.com/p?", parameters: ["a": "b"])
        #expect(bare.url?.absoluteString == "http://example.com/p?&a=b")
    }

    @Test func aQueryAppendedAfterAFragmentBecomesPartOfIt() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com/p#frag", parameters: ["k": "v"])
        #expect(request.url?.absoluteString == "http://example.com/p#frag?k=v")
        #expect(request.url?.query == nil)
    }

    @Test func topLevelStringParametersBecomeEqualsValue() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        let payload = TestSupport.progressPayload
        #expect(payload.utf8.count == 20004)
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com/post", parameters: payload)
        #expect(request.httpBody == Data(("=" + payload).utf8))
        #expect(request.httpBody?.count == 20005)
        let array = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: ["a"])
        #expect(array.url?.query == "%28null%29%5B%5D=a")
    }

    @Test func existingHeadersAreNeverReplacedByDefaults() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.setValue("default", forHTTPHeaderField: "X-Foo")
        serializer.setValue("text/custom", forHTTPHeaderField: "Content-Type")
        var request = URLRequest(url: URL(string: "http://example.com")!)
        request.httpMethod = "POST"
        request.setValue("mine", forHTTPHeaderField: "x-foo")
        let serialized = try serializer.request(bySerializingRequest: request, withParameters: ["k": "v"])
        #expect(serialized.value(forHTTPHeaderField: "X-Foo") == "mine")
        #expect(serialized.value(forHTTPHeaderField: "Content-Type") == "text/custom")
    }

    @Test func valueForHeaderIsCaseSensitiveAndNamesArePreserved() {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.setValue("v", forHTTPHeaderField: "TestHeader")
        #expect(serializer.value(forHTTPHeaderField: "TestHeader") == "v")
        #expect(serializer.value(forHTTPHeaderField: "testheader") == nil)
        #expect(serializer.httpRequestHeaders.keys.contains("TestHeader"))
    }

    @Test func basicAuthorizationHeader() {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.setAuthorizationHeaderFieldWithUsername("user", password: "password")
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        serializer.clearAuthorizationHeader()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func requestPropertiesApplyOnlyOnceSet() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        let plain = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: nil)
        #expect(plain.timeoutInterval == 60)
        serializer.timeoutInterval = 5
        serializer.cachePolicy = .reloadIgnoringLocalCacheData
        serializer.httpShouldHandleCookies = false
        serializer.allowsCellularAccess = false
        let configured = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: nil)
        #expect(configured.timeoutInterval == 5)
        #expect(configured.cachePolicy == .reloadIgnoringLocalCacheData)
        #expect(configured.httpShouldHandleCookies == false)
        #expect(configured.allowsCellularAccess == false)
        let direct = try serializer.request(bySerializingRequest: URLRequest(url: URL(string: "http://example.com")!), withParameters: nil)
        #expect(direct.timeoutInterval == 60)
    }

    @Test func styleClearsTheBlock() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.setQueryStringSerializationWith { _, _ in "raw" }
        serializer.setQueryStringSerializationWith(.defaultStyle)
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: ["a": "b"])
        #expect(request.url?.query == "a=b")
    }

    @Test func blockReturningNilIsNoQuery() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.setQueryStringSerializationWith { _, _ in nil }
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: ["a": "b"])
        #expect(request.url?.absoluteString == "http://example.com")
        let post = try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: ["a": "b"])
        #expect(post.httpBody == Data())
    }

    @Test func invalidURLsAreErrors() {
        let serializer = AFHTTPRequestSerializer.serializer()
        #expect(throws: AFURLRequestSerializationError.invalidURLString("foo bar")) {
            try serializer.request(withMethod: "GET", urlString: "foo bar", parameters: nil)
        }
        serializer.setQueryStringSerializationWith { _, _ in "a b" }
        #expect(throws: AFURLRequestSerializationError.invalidURLString("http://example.com?a b")) {
            try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: ["x": "y"])
        }
    }

    @Test func bodyUsesTheStringEncoding() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.setQueryStringSerializationWith { _, _ in "é" }
        serializer.stringEncoding = .isoLatin1
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: ["x": "y"])
        #expect(request.httpBody == Data([0xE9]))
        serializer.stringEncoding = .ascii
        #expect(throws: FormDataError.self) {
            try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: ["x": "y"])
        }
    }

    @Test func copyKeepsEverySetting() throws {
        let serializer = AFJSONRequestSerializer.serializer(withWritingOptions: .sortedKeys)
        serializer.setValue("v", forHTTPHeaderField: "X-Copy")
        serializer.timeoutInterval = 7
        serializer.stringEncoding = .isoLatin1
        serializer.httpMethodsEncodingParametersInURI = ["GET"]
        let copy = serializer.copy()
        #expect(copy !== serializer)
        #expect(copy.writingOptions == .sortedKeys)
        #expect(copy.value(forHTTPHeaderField: "X-Copy") == "v")
        #expect(copy.timeoutInterval == 7)
        #expect(copy.stringEncoding == .isoLatin1)
        #expect(copy.httpMethodsEncodingParametersInURI == ["GET"])
        copy.setValue("changed", forHTTPHeaderField: "X-Copy")
        #expect(serializer.value(forHTTPHeaderField: "X-Copy") == "v")
    }

    @Test func constants() {
        #expect(AFURLRequestSerializationErrorDomain == "com.alamofire.error.serialization.request")
        #expect(AFNetworkingOperationFailingURLRequestErrorKey == "com.alamofire.serialization.request.error.response")
        #expect(kAFUploadStream3GSuggestedPacketSize == 16384)
        #expect(kAFUploadStream3GSuggestedDelay == 0.2)
        #expect(AFHTTPRequestQueryStringSerializationStyle.defaultStyle.rawValue == 0)
    }
}
