import Foundation
import FormDataKitTesting
import Testing

@testable import FormDataKit

/// Issue 55.4: `defaultResponseEncoding` reads a reply that names no charset.
@Suite("55.4 defaultResponseEncoding")
struct DefaultResponseEncodingTests {
    static let text = "Grüße – 你好"

    func send(contentType: String, encoding: String.Encoding?) async throws -> FormDataRequest {
        let reply = FormDataResponse(statusCode: 200, headers: ["Content-Type": contentType], body: Data(Self.text.utf8))
        let request = FormDataRequest(url: URL(string: "http://example.com/api.php")!)
        request.transport = ScriptedTransport([.success(reply)])
        if let encoding { request.defaultResponseEncoding = encoding }
        _ = try await request.start()
        return request
    }

    @Test("ISO-8859-1 by default, as ASI: UTF-8 without a charset reads as Latin-1")
    func latin1ByDefault() async throws {
        let request = try await send(contentType: "text/html", encoding: nil)
        #expect(request.defaultResponseEncoding == .isoLatin1)
        #expect(request.responseString == String(data: Data(Self.text.utf8), encoding: .isoLatin1))
        #expect(request.responseString != Self.text)
    }

    @Test("set to UTF-8: a reply without a charset reads right; copy() keeps it")
    func utf8WhenSet() async throws {
        let request = try await send(contentType: "text/html", encoding: .utf8)
        #expect(request.responseString == Self.text)
        #expect(request.copy().defaultResponseEncoding == .utf8)
    }

    @Test("a charset the response names wins over the default")
    func namedCharsetWins() async throws {
        let request = try await send(contentType: "text/plain; charset=utf-8", encoding: .windowsCP1252)
        #expect(request.responseString == Self.text)
        let latin = FormDataResponse(statusCode: 200, headers: ["Content-Type": "text/plain; charset=iso-8859-1"], body: Data([0xE9]))
        #expect(latin.string(defaultEncoding: .utf8) == "é")
    }
}
