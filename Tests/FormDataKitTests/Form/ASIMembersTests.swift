import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

/// ASIHTTPRequest members ported code calls: `copy`, `encodeURL:`, `postLength` after the send,
/// `url` after redirects with `originalURL`.
@Suite("ASI members: copy, encodeURL, postLength after a send, url and originalURL after redirects")
struct ASIMembersTests {
    @Test("copy() builds the same body again: same fields, files, headers and settings; no results")
    func copyBuildsTheSameBody() async throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("photo.jpg", Data(repeating: 0xAB, count: 70_000))
        let receiver = try await FormReceiver.start()
        let original = FormDataRequest(url: receiver.url("/upload"))
        original.transport = CurlTransport()
        original.setPostValue("Ben", forKey: "name")
        try original.addFile(path, forKey: "photo")
        original.addRequestHeader("X-Retry", value: "1")
        original.timeOutSeconds = 17
        original.username = "u"
        original.password = "p"
        original.multipartBoundary = fixedBoundary
        _ = try await original.start()
        let first = try #require(receiver.lastRequest)

        let copy = original.copy()
        #expect(copy.responseStatusCode == 0 && copy.error == nil && copy.responseData == nil)
        #expect(copy.timeOutSeconds == 17 && copy.username == "u" && copy.requestHeaders["X-Retry"] == "1")
        _ = try await copy.start()
        let second = try #require(receiver.lastRequest)
        await receiver.stop()
        #expect(second.bodySHA256 == first.bodySHA256)
        #expect(second.bodyBytes == first.bodyBytes)
        #expect(second.header("Authorization") == first.header("Authorization"))
        #expect(copy.postLength == original.postLength)
    }

    @Test("encodeURL escapes as the URL-encoded body does, in the request's encoding")
    func encodeURL() {
        let request = FormDataRequest(url: anyURL)
        #expect(request.encodeURL("a b&c=d/é~") == "a%20b%26c%3Dd%2F%C3%A9%7E")
        request.stringEncoding = .isoLatin1
        #expect(request.encodeURL("é") == "%E9")
        #expect(request.encodeURL("日本") == nil)
    }

    @Test("postLength still says what was sent after the temporary body file is gone (URLSession)")
    func postLengthAfterSend() async throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("big.bin", Data(repeating: 7, count: 200_000))
        let receiver = try await FormReceiver.start()
        let request = FormDataRequest(url: receiver.url("/upload"))
        request.transport = URLSessionTransport()
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        try request.addFile(path, forKey: "f")
        try request.buildPostBody()
        let built = request.postLength
        #expect(built > 200_000)
        _ = try await request.start()
        await receiver.stop()
        #expect(request.postLength == built)
        #expect(UInt64(receiver.lastRequest?.bodyBytes ?? 0) == built)
    }

    @Test("after a redirect, url is where the send ended and originalURL where it began")
    func urlAfterRedirect() async throws {
        let server = try await EdgeServer()
        defer { server.stop() }
        let target = server.url(1, "/upload")
        let start = server.redirect(1, code: 302, to: target)
        let request = FormDataRequest(url: start)
        request.transport = CurlTransport()
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        request.setPostValue("1", forKey: "a")
        #expect(request.originalURL == nil)
        _ = try await request.start()
        #expect(request.url == target)
        #expect(request.originalURL == start)
        #expect(request.copy().url == start)
    }
}
