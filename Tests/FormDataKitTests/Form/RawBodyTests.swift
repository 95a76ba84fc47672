import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

/// Raw bodies, as ASIHTTPRequest code sends them: `appendPostData:`, `appendPostDataFromFile:`,
/// `setPostBody:`, `setPostBodyFilePath:` — JSON built by hand, a PUT of a file.
@Suite("Raw bodies: appendPostData, appendPostDataFromFile, postBody, postBodyFilePath")
struct RawBodyTests {
    @Test("postBody: hand-made JSON goes as it is, with the caller's Content-Type, over every transport", arguments: TransportKind.allCases)
    func jsonBody(kind: TransportKind) async throws {
        let json = Data(#"{"name":"Ben","tags":["a","b"]}"#.utf8)
        try await TransportTestSupport.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/json"))
            request.transport = kind.transport
            request.timeOutSeconds = TransportTestSupport.patientTimeout
            request.requestMethod = "POST"
            request.addRequestHeader("Content-Type", value: "application/json")
            request.postBody = json
            #expect(request.postBody == json)  // read back before the build, as ASI did
            _ = try await request.start()
            let arrived = try #require(receiver.lastRequest)
            #expect(arrived.bodySHA256 == SHA256.hex(json))
            #expect(arrived.header("Content-Type") == "application/json")
            #expect(arrived.header("Content-Length") == String(json.count))
            #expect(request.postLength == UInt64(json.count))
        }
    }

    @Test(
        "postBodyFilePath: a PUT of a file, sent as it is; the path reads back; curl sends it without a copy",
        arguments: TransportKind.allCases)
    func putOfAFile(kind: TransportKind) async throws {
        let file = try TransportTestSupport.makeFile(size: 3_000_000, seed: 31)
        defer { file.remove() }
        let content = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try await TransportTestSupport.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/put"))
            request.transport = kind.transport
            request.timeOutSeconds = TransportTestSupport.patientTimeout
            request.requestMethod = "PUT"
            request.postBodyFilePath = file.path
            #expect(request.postBodyFilePath == file.path)
            _ = try await request.start()
            let arrived = try #require(receiver.lastRequest)
            #expect(arrived.method == "PUT")
            #expect(arrived.bodyBytes == content.count)
            #expect(arrived.bodySHA256 == SHA256.hex(content))
            if kind == .curl { #expect(!request.isPostBodySpooled) }
            #expect(FileManager.default.fileExists(atPath: file.path))  // the caller's file stays
        }
    }

    @Test("appendPostData and appendPostDataFromFile concatenate in order; a GET with a body becomes a POST")
    func appendInOrder() async throws {
        let file = try TransportTestSupport.makeFile(size: 70_000, seed: 32)
        defer { file.remove() }
        let middle = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try await TransportTestSupport.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/raw"))
            request.transport = CurlTransport()
            request.timeOutSeconds = TransportTestSupport.patientTimeout
            request.requestMethod = "GET"
            request.appendPostData(Data("head-".utf8))
            try request.appendPostDataFromFile(file.path)
            request.appendPostData(Data("-tail".utf8))
            _ = try await request.start()
            let arrived = try #require(receiver.lastRequest)
            #expect(arrived.method == "POST")
            #expect(arrived.bodySHA256 == SHA256.hex(Data("head-".utf8) + middle + Data("-tail".utf8)))
            #expect(arrived.header("Content-Type") == nil)
        }
    }

    @Test("a raw body with form fields is a build error naming the field; a missing file fails at once")
    func badInput() throws {
        let request = FormDataRequest(url: anyURL)
        request.appendPostData(Data("x".utf8))
        request.setPostValue("1", forKey: "field")
        #expect(throws: FormDataError.rawBodyWithFormFields(field: "field")) { try request.buildPostBody() }
        #expect(throws: FormDataError.fileNotFound(path: "/no/such/file")) { try request.appendPostDataFromFile("/no/such/file") }
        let raw = FormDataRequest(url: anyURL)
        raw.appendPostData(Data("x".utf8))
        try raw.buildPostBody()
        #expect(raw.postLength == 1)
        raw.postBody = nil
        try raw.buildPostBody()
        #expect(raw.postLength == 0)
    }
}
