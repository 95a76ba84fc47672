#if canImport(Glibc)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Glibc
#endif
@testable import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Header injection, escaping, temporary-file permissions, boundary collisions, and bounded
/// response decompression.
extension Reliability {
    @Suite("Security")
    struct SecurityTests {
        static let badHeaders: [(String, String)] = [
            ("X-Test", "a\r\nInjected: 1"), ("X-Test", "a\nb"), ("X-Test", "a\rb"), ("X-Test", "a\0b"),
            ("X-Te st", "v"), ("X-Test\r\nInjected", "v"), ("", "v"), ("X:Y", "v"), ("X\0", "v"),
        ]

        @Test("FormDataRequest refuses request headers with CR, LF or NUL, or a name that is not a token")
        func asiHeaderInjection() async throws {
            for (name, value) in Self.badHeaders {
                let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
                request.addPostValue("1", forKey: "a")
                request.addRequestHeader(name, value: value)
                #expect(throws: FormDataError.invalidRequestHeader(name: name, value: value)) { try request.buildPostBody() }
                // Sending reports it too, before any connection is made (port 9 is never contacted).
                var failure: FormDataError?
                do { _ = try await request.start() } catch { failure = error }
                #expect(failure == .invalidRequestHeader(name: name, value: value))
                #expect(failure?.asiErrorCode == 5)
            }
            // Headers that only go out at send time: a user agent with CRLF, a header set after a build.
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            request.userAgentString = "agent\r\nX-Evil: 1"
            var failure: FormDataError?
            do { _ = try await request.start() } catch { failure = error }
            #expect(failure == .invalidRequestHeader(name: "User-Agent", value: "agent\r\nX-Evil: 1"))
            // Good headers still pass.
            let good = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            good.addRequestHeader("X-Fine_Name.1~", value: "tab\tand unicode é")
            good.addPostValue("1", forKey: "a")
            try good.buildPostBody()
        }

        @Test("AF serializers refuse request headers with CR, LF or NUL, or a name that is not a token")
        func afHeaderInjection() throws {
            for (name, value) in Self.badHeaders {
                let serializer = AFHTTPRequestSerializer.serializer()
                serializer.setValue(value, forHTTPHeaderField: name)
                #expect(throws: FormDataError.invalidRequestHeader(name: name, value: value)) {
                    _ = try serializer.request(withMethod: "POST", urlString: "http://127.0.0.1:9/x", parameters: ["a": "1"])
                }
                #expect(throws: FormDataError.invalidRequestHeader(name: name, value: value)) {
                    _ = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://127.0.0.1:9/x", parameters: ["a": "1"]) {
                        _ in
                    }
                }
            }
        }

        @Test("A part content type or a custom boundary with CR/LF cannot inject headers")
        func partHeaderInjection() throws {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            request.addData(Data("x".utf8), withFileName: "a.txt", andContentType: "text/plain\r\nX-Evil: 1", forKey: "f")
            #expect(throws: FormDataError.invalidHeaderValue(field: "f", value: "text/plain\r\nX-Evil: 1")) { try request.buildPostBody() }

            for boundary in ["abc\r\nX-Evil: 1", "a\"b", "", String(repeating: "a", count: 71), "ends with space ", "semi;colon"] {
                let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
                request.addData(Data("x".utf8), forKey: "f")
                request.multipartBoundary = boundary
                #expect(throws: FormDataError.invalidHeaderValue(field: "(multipart boundary)", value: boundary)) {
                    try request.buildPostBody()
                }
            }
            let serializer = AFHTTPRequestSerializer.serializer()
            serializer.multipartBoundary = "Boundary\r\nX-Evil: 1"
            #expect(throws: AFURLRequestSerializationError.invalidBoundary("Boundary\r\nX-Evil: 1")) {
                _ = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://127.0.0.1:9/x", parameters: nil) { form in
                    form.appendPart(withForm: Data("1".utf8), name: "a")
                }
            }
        }

        @Test("Part names and file names are escaped (WHATWG), in both façades")
        func namesEscaped() throws {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            request.multipartBoundary = "B"
            request.addData(
                Data("x".utf8), withFileName: "evil\".txt\r\nContent-Type: text/html", andContentType: "text/plain", forKey: "n\"a\r\nme")
            try request.buildPostBody()
            let body = String(decoding: try Data(contentsOf: URL(fileURLWithPath: try #require(request.postBodyFilePath))), as: UTF8.self)
            #expect(
                body.contains(
                    "Content-Disposition: form-data; name=\"n%22a%0D%0Ame\"; filename=\"evil%22.txt%0D%0AContent-Type: text/html\"\r\n"))
            #expect(!body.contains("\r\nContent-Type: text/html"))

            let serializer = AFHTTPRequestSerializer.serializer()
            serializer.multipartBoundary = "B"
            let af = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://127.0.0.1:9/x", parameters: nil) { form in
                form.appendPart(withFileData: Data("x".utf8), name: "n\"a\r\nme", fileName: "evil\".txt\r\nX: y", mimeType: "text/plain")
            }
            let stream = try #require(af.httpBodyStream as? AFMultipartBodyStream)
            let afBody = String(decoding: try stream.bodySource.readAll(), as: UTF8.self)
            #expect(afBody.contains("name=\"n%22a%0D%0Ame\"; filename=\"evil%22.txt%0D%0AX: y\"\r\n"))
        }

        @Test("Temporary bodies are 0600 files in a 0700 directory (plain and gzip)", arguments: [false, true])
        func temporaryFilePermissions(gzip: Bool) throws {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            request.addData(Data(repeating: 1, count: 10_000), forKey: "f")
            request.shouldCompressRequestBody = gzip
            try request.buildPostBody()
            let path = try #require(gzip ? request.compressedPostBodyFilePath : request.postBodyFilePath)
            var fileInfo = stat()
            var directoryInfo = stat()
            #expect(stat(path, &fileInfo) == 0)
            #expect(stat((path as NSString).deletingLastPathComponent, &directoryInfo) == 0)
            #expect(fileInfo.st_mode & 0o777 == 0o600)
            #expect(directoryInfo.st_mode & 0o777 == 0o700)
            #expect(fileInfo.st_uid == getuid())
        }

        @Test("The boundary never occurs in in-memory content: a generated one is replaced, a set one is an error")
        func boundaryCollisions() throws {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            request.addData(Data("first".utf8), forKey: "f")
            try request.buildPostBody()
            let first = request.multipartBoundary
            // Content that contains the boundary just used: the rebuild must pick another.
            request.addPostValue("x\r\n--\(first)\r\nContent-Disposition: form-data; name=\"forged\"\r\n\r\nforged", forKey: "v")
            request.addData(Data("--\(first)--".utf8), forKey: "g")
            try request.buildPostBody()
            let second = request.multipartBoundary
            #expect(second != first)
            let body = try Data(contentsOf: URL(fileURLWithPath: try #require(request.postBodyFilePath)))
            let parsed = try FormBodyParser.parse(body, contentType: try #require(request.requestHeaders["Content-Type"]))
            #expect(parsed.fields.map(\.name) == ["v"])
            #expect(parsed.files.map(\.name) == ["f", "g"])

            let fixed = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            fixed.multipartBoundary = "FixedBoundary"
            fixed.postFormat = .multipartFormData
            fixed.addPostValue("a--FixedBoundary", forKey: "v")
            #expect(throws: FormDataError.boundaryCollision(boundary: "FixedBoundary", field: "v")) { try fixed.buildPostBody() }

            let serializer = AFHTTPRequestSerializer.serializer()
            serializer.multipartBoundary = "FixedBoundary"
            #expect(throws: FormDataError.boundaryCollision(boundary: "FixedBoundary", field: "v")) {
                _ = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://127.0.0.1:9/x", parameters: nil) { form in
                    form.appendPart(withForm: Data("--FixedBoundary".utf8), name: "v")
                }
            }
        }

        @Test("A gzip bomb response is stopped at maximumDecompressedResponseSize")
        func gzipBombResponse() async throws {
            let server = try await FaultServer.start()
            let bomb = FormDataRequest(url: server.url("/bomb/\(64 << 20)"))
            bomb.requestMethod = "GET"
            bomb.transport = Reliability.transport
            bomb.maximumDecompressedResponseSize = 1 << 20
            var failure: FormDataError?
            do { _ = try await bomb.start() } catch { failure = error }
            #expect(failure == .compression(underlying: .decompressedSizeLimitExceeded(limit: 1 << 20)), "\(String(describing: failure))")
            #expect(failure?.asiErrorCode == 11)

            let fine = FormDataRequest(url: server.url("/bomb/\(512 << 10)"))
            fine.requestMethod = "GET"
            fine.transport = Reliability.transport
            fine.maximumDecompressedResponseSize = 1 << 20
            let response = try await fine.start()
            await server.stop()
            #expect(response.body == Data(count: 512 << 10))
            #expect(FormDataRequest(url: server.url("/")).maximumDecompressedResponseSize == 256 << 20)
        }

        @Test("A gzip body still compressed when it arrives (AsyncHTTPClient) is inflated as it comes, within the limit")
        func boundedInflationOfRawGzip() throws {
            let bomb = try DataCompressor.compressData(Data(count: 2 << 20))
            let head = TransportResponseHead(statusCode: 200, headers: ["Content-Encoding": "gzip"])
            var stopped = ResponseBodyCollector(head: head, transportDecodes: false, decompressedLimit: 1 << 20)
            #expect(throws: FormDataError.compression(underlying: .decompressedSizeLimitExceeded(limit: 1 << 20))) {
                for start in stride(from: 0, to: bomb.count, by: 1000) { try stopped.append(bomb[start..<min(start + 1000, bomb.count)]) }
            }
            var fits = ResponseBodyCollector(head: head, transportDecodes: false, decompressedLimit: 2 << 20)
            for start in stride(from: 0, to: bomb.count, by: 1000) { try fits.append(bomb[start..<min(start + 1000, bomb.count)]) }
            #expect(try fits.finish() == Data(count: 2 << 20))
            var truncated = ResponseBodyCollector(head: head, transportDecodes: false, decompressedLimit: 2 << 20)
            try truncated.append(bomb.prefix(bomb.count / 2))
            #expect(throws: FormDataError.self) { try truncated.finish() }
            var decoded = ResponseBodyCollector(head: head, transportDecodes: true, decompressedLimit: 10)
            try decoded.append(Data(count: 5))
            #expect(try decoded.finish() == Data(count: 5))
        }
    }
}
