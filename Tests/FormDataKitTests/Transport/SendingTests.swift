import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

@Suite("Sending to the embedded receiver")
struct SendingTests {
    typealias Support = TransportTestSupport

    @Test("fields and a file arrive intact; Content-Length equals the bytes received", arguments: TransportKind.allCases)
    func fieldsAndFile(kind: TransportKind) async throws {
        let file = try Support.makeFile(size: 300_000, seed: 7, name: "photo.jpg")
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("Ben", forKey: "first_name")
            request.setPostValue("Grüße ✓", forKey: "greeting")
            try request.addFile(file.path, forKey: "photo")
            request.addData(Data([0, 1, 2, 255]), withFileName: "bytes.bin", andContentType: "application/octet-stream", forKey: "raw")
            let response = try await request.start()

            #expect(response.statusCode == 200)
            let received = try #require(receiver.lastRequest)
            #expect(received.parseError == nil)
            #expect(received.contentLength == received.bodyBytes)
            #expect(received.header("Transfer-Encoding") == nil)
            #expect(received.header("Expect") == nil)
            let form = try #require(received.form)
            #expect(form.value("first_name") == "Ben")
            #expect(form.value("greeting") == "Grüße ✓")
            let photo = try #require(form.file("photo"))
            #expect(photo.fileName == "photo.jpg")
            #expect(photo.contentType == "image/jpeg")
            #expect(photo.size == file.data.count)
            #expect(photo.sha256 == file.sha256)
            #expect(form.file("raw")?.data == Data([0, 1, 2, 255]))
            #expect(request.responseStatusCode == 200)
            #expect(request.responseStatusMessage == "HTTP/1.1 200 OK")
            #expect(request.error == nil)
        }
    }

    @Test("a small URL-encoded body goes from memory with its exact length", arguments: TransportKind.allCases)
    func urlEncodedFromMemory(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/form"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.addPostValue("a b&c", forKey: "q")
            request.addPostValue(42, forKey: "n")
            _ = try await request.start()
            let received = try #require(receiver.lastRequest)
            #expect(received.header("Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
            #expect(received.contentLength == received.bodyBytes)
            #expect(received.form?.fields == [ParsedField(name: "q", value: "a b&c"), ParsedField(name: "n", value: "42")])
        }
    }

    @Test("a gzip body carries Content-Encoding and inflates to the form", arguments: TransportKind.allCases, [false, true])
    func gzipBody(kind: TransportKind, withFile: Bool) async throws {
        let file = try Support.makeFile(size: 200_000, seed: 3, name: "data.txt")
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue(String(repeating: "compressible text ", count: 500), forKey: "text")
            if withFile { try request.addFile(file.path, forKey: "file") }
            request.shouldCompressRequestBody = true
            try request.buildPostBody()
            let spooled = request.compressedPostBodyFilePath
            _ = try await request.start()
            let received = try #require(receiver.lastRequest)
            #expect(received.header("Content-Encoding") == "gzip")
            #expect(received.contentLength == received.bodyBytes)
            #expect(received.parseError == nil)
            #expect(received.form?.value("text") == String(repeating: "compressible text ", count: 500))
            if withFile {
                #expect(received.form?.file("file")?.sha256 == file.sha256)
                let path = try #require(spooled)
                #expect(!Support.exists(path))
            }
        }
    }

    @Test("a gzip response is inflated; allowCompressedResponse controls Accept-Encoding", arguments: TransportKind.allCases)
    func gzipResponse(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/gzip"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("x", forKey: "y")
            let response = try await request.start()
            #expect(response.header("Content-Encoding") == "gzip")
            let decoded = try JSONDecoder().decode(ReceivedRequest.self, from: response.body)
            #expect(decoded.form?.value("y") == "x")
            #expect(decoded.header("Accept-Encoding") == "gzip")
            #expect(request.responseString?.contains("\"method\":\"POST\"") == true)

            let plain = FormDataRequest(url: receiver.url("/echo"))
            plain.transport = kind.transport
            plain.timeOutSeconds = Support.patientTimeout
            plain.allowCompressedResponse = false
            plain.setPostValue("x", forKey: "y")
            _ = try await plain.start()
            #expect(receiver.lastRequest?.header("Accept-Encoding") == "identity")
        }
    }

    @Test("404 and 500 are responses, not errors", arguments: TransportKind.allCases)
    func errorStatuses(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            for code in [404, 500] {
                let request = FormDataRequest(url: receiver.url("/status/\(code)"))
                request.transport = kind.transport
                request.timeOutSeconds = Support.patientTimeout
                request.setPostValue("v", forKey: "k")
                let response = try await request.start()
                #expect(response.statusCode == code)
                #expect(request.error == nil)
                #expect(request.responseStatusCode == code)
                #expect(request.responseStatusMessage == (code == 404 ? "HTTP/1.1 404 Not Found" : "HTTP/1.1 500 Internal Server Error"))
                #expect(request.responseData?.isEmpty == false)
            }
        }
    }

    @Test("Basic authentication: header, username/password, and 401 as authenticationNeeded", arguments: TransportKind.allCases)
    func basicAuthentication(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let viaHeader = FormDataRequest(url: receiver.url("/auth/secret_username/secret_password"))
            viaHeader.transport = kind.transport
            viaHeader.timeOutSeconds = Support.patientTimeout
            viaHeader.addBasicAuthenticationHeader(withUsername: "secret_username", andPassword: "secret_password")
            viaHeader.setPostValue("1", forKey: "a")
            let first = try await viaHeader.start()
            #expect(first.statusCode == 200)
            #expect(receiver.lastRequest?.header("Authorization") == "Basic c2VjcmV0X3VzZXJuYW1lOnNlY3JldF9wYXNzd29yZA==")

            let viaProperties = FormDataRequest(url: receiver.url("/auth/u/p"))
            viaProperties.transport = kind.transport
            viaProperties.timeOutSeconds = Support.patientTimeout
            viaProperties.username = "u"
            viaProperties.password = "p"
            viaProperties.setPostValue("1", forKey: "a")
            let second = try await viaProperties.start()
            #expect(second.statusCode == 200)

            let wrong = FormDataRequest(url: receiver.url("/auth/u/p"))
            wrong.transport = kind.transport
            wrong.timeOutSeconds = Support.patientTimeout
            wrong.username = "u"
            wrong.password = "wrong"
            wrong.setPostValue("1", forKey: "a")
            await #expect(
                throws: FormDataError.authenticationNeeded(
                    underlying: UnderlyingError(
                        domain: "HTTP", code: 401, message: "HTTP/1.1 401 Unauthorized (the server asks for Basic, realm \"receiver\")"))
            ) {
                try await wrong.start()
            }
            #expect(wrong.error?.asiErrorCode == 3)
        }
    }

    @Test("User-Agent: userAgentString, or the default", arguments: TransportKind.allCases)
    func userAgent(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/ua"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("1", forKey: "a")
            request.userAgentString = "My Application 1.0 (Linux)"
            _ = try await request.start()
            #expect(receiver.lastRequest?.header("User-Agent") == "My Application 1.0 (Linux)")
            request.userAgentString = nil
            _ = try await request.start()
            #expect(receiver.lastRequest?.header("User-Agent") == FormDataRequest.defaultUserAgentString)
        }
    }

    @Test("curl: a caller's headers reach the wire as given — an empty value, a long one, many of them")
    func headerLinesOverCurl() async throws {
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/headers"))
            request.transport = CurlTransport.shared
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("1", forKey: "a")
            let long = String(repeating: "v", count: 6000)
            request.addRequestHeader("X-Empty", value: "")
            request.addRequestHeader("X-Long", value: long)
            for index in 0..<40 { request.addRequestHeader("X-N\(index)", value: "é \(index)") }
            _ = try await request.start()
            let seen = try #require(receiver.lastRequest)
            #expect(seen.header("X-Empty") == "")
            #expect(seen.header("X-Long") == long)
            #expect((0..<40).allSatisfy { seen.header("X-N\($0)") == "é \($0)" })
        }
    }
}
