import FormDataKitAF
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The response serializers (the parts of `AFJSONResponseSerializationTests` the session
/// manager relies on).
@Suite("AF response serializers")
struct AFResponseSerializerTests {
    private func response(_ status: Int = 200, type: String?) -> HTTPURLResponse {
        HTTPURLResponse(
            url: URL(string: "http://example.com")!, statusCode: status, httpVersion: "HTTP/1.1",
            headerFields: type.map { ["Content-Type": $0] } ?? [:])!
    }

    @Test func jsonAcceptsTheJSONTypes() throws {
        let serializer = AFJSONResponseSerializer.serializer()
        for type in ["application/json", "text/json", "text/javascript", "application/json; charset=utf-8"] {
            let object = try serializer.responseObject(for: response(type: type), data: Data("{\"a\":1}".utf8))
            #expect((object as? [String: Any])?["a"] as? Int == 1, "\(type)")
        }
    }

    @Test func jsonRejectsOtherTypes() {
        var caught: (any Error)?
        do {
            _ = try AFJSONResponseSerializer.serializer().responseObject(for: response(type: "nonstandard/json"), data: Data("{}".utf8))
        } catch {
            caught = error
        }
        let error = caught as NSError?
        #expect(error?.domain == AFURLResponseSerializationErrorDomain)
        #expect(error?.code == -1016)
        #expect(error?.localizedDescription == "Request failed: unacceptable content-type: nonstandard/json")
    }

    @Test func jsonEmptyAndSingleSpaceAreNil() throws {
        let serializer = AFJSONResponseSerializer.serializer()
        #expect(try serializer.responseObject(for: response(type: "application/json"), data: Data()) == nil)
        #expect(try serializer.responseObject(for: response(type: "application/json"), data: Data(" ".utf8)) == nil)
    }

    @Test func jsonInvalidBodyIsAnError() {
        #expect(throws: (any Error).self) {
            try AFJSONResponseSerializer.serializer().responseObject(for: response(type: "application/json"), data: Data("{invalid}".utf8))
        }
    }

    @Test func jsonRemovesNullsWhenAsked() throws {
        let serializer = AFJSONResponseSerializer.serializer()
        serializer.removesKeysWithNullValues = true
        let object = try serializer.responseObject(
            for: response(type: "application/json"), data: Data("{\"a\":null,\"b\":{\"c\":null,\"d\":1},\"e\":[null]}".utf8))
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary["a"] == nil)
        #expect((dictionary["b"] as? [String: Any])?.keys.sorted() == ["d"])
        #expect((dictionary["e"] as? [Any])?.isEmpty == true)
    }

    @Test func statusCodesOutsideTheAcceptableSetFail() {
        let serializer = AFHTTPResponseSerializer.serializer()
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(serializer.acceptableContentTypes == nil)
        var caught: (any Error)?
        do {
            _ = try serializer.responseObject(for: response(500, type: "text/plain"), data: Data("x".utf8))
        } catch {
            caught = error
        }
        #expect((caught as NSError?)?.code == -1011)
        #expect((caught as NSError?)?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data == Data("x".utf8))
    }

    @Test func httpSerializerReturnsTheData() throws {
        let data = Data("raw".utf8)
        #expect(
            try AFHTTPResponseSerializer.serializer().responseObject(for: response(type: "anything/at-all"), data: data) as? Data == data)
    }

    @Test func copyKeepsSettings() {
        let serializer = AFJSONResponseSerializer.serializer(withReadingOptions: .fragmentsAllowed)
        serializer.removesKeysWithNullValues = true
        serializer.acceptableStatusCodes = IndexSet([200])
        let copy = serializer.copy()
        #expect(copy !== serializer)
        #expect(copy.readingOptions == .fragmentsAllowed)
        #expect(copy.removesKeysWithNullValues)
        #expect(copy.acceptableStatusCodes == IndexSet([200]))
        #expect(copy.acceptableContentTypes == ["application/json", "text/json", "text/javascript"])
    }
}
