import FormDataKitAF
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The request half of `AFJSONSerializationTests` and `AFPropertyListRequestSerializerTests`.
@Suite("AFJSONRequestSerializer and AFPropertyListRequestSerializer (T-JSON, T-PLIST)")
struct AFJSONAndPropertyListTests {
    let url = "https://httpbin.org"

    @Test func jsonHandlesParametersDictionary() throws {
        let request = try AFJSONRequestSerializer().request(withMethod: "POST", urlString: url, parameters: ["key": "value"])
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "{\"key\":\"value\"}")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func jsonHandlesParametersArray() throws {
        let request = try AFJSONRequestSerializer().request(withMethod: "POST", urlString: url, parameters: [["key": "value"]])
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "[{\"key\":\"value\"}]")
    }

    /// AF's input is a lone UTF-16 surrogate, which a Swift `String` cannot hold (and Linux
    /// `NSString` repairs); a value `JSONSerialization` cannot write stands in for it.
    @Test func jsonHandlesInvalidParameters() {
        var request: URLRequest?
        var caught: (any Error)?
        do {
            request = try AFJSONRequestSerializer().request(withMethod: "POST", urlString: url, parameters: ["key": Double.nan])
        } catch {
            caught = error
        }
        #expect(request == nil)
        #expect(caught != nil)
    }

    @Test func jsonErrorsWithInvalidJSON() {
        var caught: (any Error)?
        do {
            _ = try AFJSONRequestSerializer().request(withMethod: "POST", urlString: url, parameters: ["key": Set(["value"])])
        } catch {
            caught = error
        }
        let error = caught as NSError?
        #expect(error?.domain == AFURLRequestSerializationErrorDomain)
        #expect(error?.code == URLError.Code.cannotDecodeContentData.rawValue)
        #expect(error?.code == -1016)
        #expect(error?.localizedFailureReason == "The `parameters` argument is not valid JSON.")
    }

    @Test func jsonWithNilParametersHasNoBodyAndNoContentType() throws {
        let request = try AFJSONRequestSerializer.serializer().request(withMethod: "POST", urlString: url, parameters: nil)
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func jsonGETUsesTheQueryString() throws {
        let request = try AFJSONRequestSerializer.serializer().request(withMethod: "GET", urlString: url, parameters: ["key": "value"])
        #expect(request.url?.query == "key=value")
        #expect(request.httpBody == nil)
    }

    @Test func jsonTopLevelStringIsInvalidEvenWithFragmentsAllowed() {
        let serializer = AFJSONRequestSerializer.serializer(withWritingOptions: .fragmentsAllowed)
        #expect(throws: AFURLRequestSerializationError.invalidJSONParameters) {
            try serializer.request(withMethod: "POST", urlString: url, parameters: "text")
        }
    }

    @Test func jsonEscapesSlashesUnlessAskedNotTo() throws {
        let escaped = try AFJSONRequestSerializer().request(withMethod: "POST", urlString: url, parameters: ["u": "a/b"])
        #expect(String(decoding: escaped.httpBody ?? Data(), as: UTF8.self) == "{\"u\":\"a\\/b\"}")
        let plain = try AFJSONRequestSerializer.serializer(withWritingOptions: .withoutEscapingSlashes)
            .request(withMethod: "POST", urlString: url, parameters: ["u": "a/b"])
        #expect(String(decoding: plain.httpBody ?? Data(), as: UTF8.self) == "{\"u\":\"a/b\"}")
    }

    @Test func propertyListAcceptsPlist() throws {
        let request = try AFPropertyListRequestSerializer.serializer().request(
            withMethod: "POST", urlString: url, parameters: ["key": "value"])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
        #expect(body.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(body.contains("<key>key</key>"))
        let decoded = try PropertyListSerialization.propertyList(from: request.httpBody ?? Data(), format: nil) as? [String: String]
        #expect(decoded == ["key": "value"])
    }

    @Test func propertyListHandlesInvalidPlist() {
        var request: URLRequest?
        var caught: (any Error)?
        do {
            request = try AFPropertyListRequestSerializer.serializer().request(
                withMethod: "POST", urlString: url, parameters: [42: "value"])
        } catch {
            caught = error
        }
        #expect(request == nil)
        #expect(caught != nil)
    }

    @Test func propertyListDefaultsAndBinaryFormat() throws {
        let serializer = AFPropertyListRequestSerializer.serializer()
        #expect(serializer.format == .xml)
        #expect(serializer.writeOptions == 0)
        let binary = AFPropertyListRequestSerializer.serializer(withFormat: .binary, writeOptions: 0)
        let request = try binary.request(withMethod: "PUT", urlString: url, parameters: ["key": "value"])
        #expect(request.httpBody?.starts(with: Data("bplist00".utf8)) == true)
    }
}
