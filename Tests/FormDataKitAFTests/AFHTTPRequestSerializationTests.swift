import FormDataKit
import FormDataKitAF
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// AFNetworking's `AFHTTPRequestSerializationTests`, ported with the same inputs and expected values.
@Suite("AFHTTPRequestSerializer (T-REQ)")
struct AFHTTPRequestSerializationTests {
    let requestSerializer = AFHTTPRequestSerializer.serializer()

    private func postRequest() -> URLRequest {
        var request = URLRequest(url: URL(string: "http://example.com")!)
        request.httpMethod = "POST"
        return request
    }

    @Test func serializesPOSTRequestsProperly() throws {
        let serialized = try requestSerializer.request(bySerializingRequest: postRequest(), withParameters: ["key": "value"])
        let contentType = serialized.value(forHTTPHeaderField: "Content-Type")
        #expect(contentType == "application/x-www-form-urlencoded")
        #expect(serialized.httpBody == Data("key=value".utf8))
    }

    @Test func serializesPOSTRequestsProperlyWhenNoParameterIsProvided() throws {
        let serialized = try requestSerializer.request(bySerializingRequest: postRequest(), withParameters: nil)
        #expect(serialized.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(serialized.httpBody != nil)
        #expect(serialized.httpBody == Data())
    }

    @Test func serializesQueryParametersCorrectly() throws {
        let request = URLRequest(url: URL(string: "http://example.com")!)
        let serialized = try requestSerializer.request(bySerializingRequest: request, withParameters: ["key": "value"])
        #expect(serialized.url?.query == "key=value")
    }

    @Test func emptyDictionaryParametersAreProperlyEncoded() throws {
        let request = URLRequest(url: URL(string: "http://example.com")!)
        let serialized = try requestSerializer.request(bySerializingRequest: request, withParameters: [String: String]())
        #expect(serialized.url?.absoluteString.hasSuffix("?") == false)
    }

    @Test func serializesURLEncodableQueryParametersCorrectly() throws {
        let request = URLRequest(url: URL(string: "http://example.com")!)
        let serialized = try requestSerializer.request(bySerializingRequest: request, withParameters: ["key": " :#[]@!$&'()*+,;=/?"])
        #expect(serialized.url?.query == "key=%20%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D/?")
    }

    @Test func serializesURLEncodedQueryParametersCorrectly() throws {
        let request = URLRequest(url: URL(string: "http://example.com")!)
        let serialized = try requestSerializer.request(
            bySerializingRequest: request, withParameters: ["key": "%20%21%22%23%24%25%26%27%28%29%2A%2B%2C%2F"])
        #expect(serialized.url?.query == "key=%2520%2521%2522%2523%2524%2525%2526%2527%2528%2529%252A%252B%252C%252F")
    }

    @Test func serializesQueryParametersCorrectlyFromQuerySerializationBlock() throws {
        requestSerializer.setQueryStringSerializationWith { _, parameters in
            var query = ""
            for (key, value) in parameters as? [String: String] ?? [:] { query += "\(key)**\(value)" }
            return query
        }
        let request = URLRequest(url: URL(string: "http://example.com")!)
        let serialized = try requestSerializer.request(bySerializingRequest: request, withParameters: ["key": "value"])
        #expect(serialized.url?.query == "key**value")
    }

    @Test func serializesMIMETypeCorrectly() throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try TestSupport.write(Data([0x30, 0x82, 0x01, 0x0A]), named: "adn_0.cer", in: directory)
        requestSerializer.multipartBoundary = TestSupport.boundary
        let request = try requestSerializer.multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com", parameters: nil
        ) { form in
            try form.appendPart(withFileURL: certificate, name: "test")
        }
        let parsed = try ParsedMultipart(try TestSupport.body(of: request), boundary: TestSupport.boundary)
        #expect(parsed.parts.first?.header("Content-Type") == "application/x-x509-ca-cert")
        #expect(parsed.parts.first?.fileName == "adn_0.cer")
    }

    @Test func valueForHTTPHeaderFieldReturnsSetValue() {
        requestSerializer.setValue("Actual Value", forHTTPHeaderField: "Set-Header")
        #expect(requestSerializer.value(forHTTPHeaderField: "Set-Header") == "Actual Value")
    }

    @Test func valueForHTTPHeaderFieldReturnsNilForUnsetHeader() {
        #expect(requestSerializer.value(forHTTPHeaderField: "Unset-Header") == nil)
    }

    @Test func queryStringSerializationCanFailWithError() {
        let serializer = AFHTTPRequestSerializer.serializer()
        let serializerError = NSError(domain: "TestDomain", code: 0, userInfo: nil)
        serializer.setQueryStringSerializationWith { _, _ in throw serializerError }
        var request: URLRequest?
        var caught: (any Error)?
        do {
            request = try serializer.request(withMethod: "GET", urlString: "url", parameters: [String: String]())
        } catch {
            caught = error
        }
        #expect(request == nil)
        #expect((caught as AnyObject?) === serializerError)
    }

    @Test func httpHeaderValueCanBeRemoved() {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.setValue("test", forHTTPHeaderField: "TestHeader")
        #expect(serializer.httpRequestHeaders["TestHeader"] == "test")
        serializer.setValue(nil, forHTTPHeaderField: "TestHeader")
        #expect(!serializer.httpRequestHeaders.keys.contains("TestHeader"))
    }

    @Test func httpHeaderValueCanBeSetFromMultipleThreadsWithoutCrashing() async {
        let serializer = requestSerializer
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<1000 {
                group.addTask {
                    let value = "value \(i)"
                    serializer.setValue(value, forHTTPHeaderField: "FrequentlyUpdatedHeaderField")
                    _ = serializer.httpRequestHeaders
                }
            }
        }
        let final = serializer.value(forHTTPHeaderField: "FrequentlyUpdatedHeaderField")
        #expect(final != nil)
        #expect(final?.hasPrefix("value ") == true)
    }

    @Test func concurrentWritesOnDispatchQueuesKeepEveryHeader() {
        let serializer = requestSerializer
        DispatchQueue.concurrentPerform(iterations: 1000) { i in
            serializer.setValue("\(i)", forHTTPHeaderField: "X-Header-\(i)")
        }
        let headers = serializer.httpRequestHeaders
        #expect((0..<1000).allSatisfy { headers["X-Header-\($0)"] == "\($0)" })
    }

    @Test func queryStringFromParameters() {
        #expect(AFQueryStringFromParameters(["key": "value", "key1": "value&"]) == "key=value&key1=value%26")
    }

    @Test func percentEscapingString() {
        #expect(AFPercentEscapedStringFromString(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")
    }

    @Test func emojiIsProperlyEncoded() throws {
        var parameter = "!"
        while parameter.utf16.count < 50 { parameter += "👴🏿👷🏻👮🏽" }
        #expect(parameter.utf16.count == 61)
        let request = try requestSerializer.request(withMethod: "GET", urlString: "http://test.com", parameters: ["test": parameter])
        let expected = "test=%21" + String(repeating: "%F0%9F%91%B4%F0%9F%8F%BF%F0%9F%91%B7%F0%9F%8F%BB%F0%9F%91%AE%F0%9F%8F%BD", count: 5)
        #expect(request.url?.query == expected)
        #expect(expected.count == 368)
    }
}
