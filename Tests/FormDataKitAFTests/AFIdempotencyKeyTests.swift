import FormDataKit
import FormDataKitAF
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `AFHTTPRequestSerializer.shouldSendIdempotencyKey` and `AFHTTPSessionManager.retryPolicy`.
@Suite("AF: Idempotency-Key and retry policy")
struct AFIdempotencyKeyTests {
    @Test("each request the serializer makes gets a key of its own; a request's own key is kept; none by default")
    func serializerKeys() throws {
        let serializer = AFHTTPRequestSerializer()
        let plain = try serializer.request(withMethod: "POST", urlString: "http://example.com/r", parameters: ["a": "1"])
        #expect(plain.value(forHTTPHeaderField: "Idempotency-Key") == nil)
        serializer.shouldSendIdempotencyKey = true
        let first = try serializer.request(withMethod: "POST", urlString: "http://example.com/r", parameters: ["a": "1"])
        let second = try serializer.request(withMethod: "POST", urlString: "http://example.com/r", parameters: ["a": "1"])
        let key = try #require(first.value(forHTTPHeaderField: "Idempotency-Key"))
        #expect(key.count == 38 && key.hasPrefix("\""))
        #expect(second.value(forHTTPHeaderField: "Idempotency-Key") != key)
        var own = URLRequest(url: URL(string: "http://example.com/r")!)
        own.httpMethod = "POST"
        own.setValue("\"mine\"", forHTTPHeaderField: "Idempotency-Key")
        let kept = try serializer.request(bySerializingRequest: own, withParameters: ["a": "1"])
        #expect(kept.value(forHTTPHeaderField: "Idempotency-Key") == "\"mine\"")
    }

    @Test("the managers' retry policy: nil by default, kept when set, given to each operation")
    func managerPolicy() {
        let manager = AFHTTPSessionManager(baseURL: nil)
        #expect(manager.retryPolicy == nil)
        manager.retryPolicy = RetryPolicy(maximumRetries: 2, honoursRetryAfter: true)
        #expect(manager.retryPolicy?.maximumRetries == 2)
        let operations = AFHTTPRequestOperationManager(baseURL: nil)
        #expect(operations.retryPolicy == nil)
        operations.retryPolicy = RetryPolicy(maximumRetries: 4)
        let operation = operations.httpRequestOperation(
            with: URLRequest(url: URL(string: "http://example.com/r")!), success: nil, failure: nil)
        #expect(operation.retryPolicy == RetryPolicy(maximumRetries: 4))
    }
}
