import Foundation
import FormDataKit
import FormDataKitTestSupport
import Testing

extension HTTP2Suites {
    /// Parts of unknown length over h2 (the streams issue's `Transfer-Encoding: chunked` has no
    /// place in HTTP/2: the body goes as DATA frames ending with END_STREAM, without a
    /// `content-length`), against Apache mod_http2 over TLS and h2c.
    @Suite(
        "Parts of unknown length over HTTP/2 (curl transport, Apache mod_http2)",
        .enabled(if: H2ApacheServer.missing == nil || RealServers.required, "needs Apache with mod_http2: apt-get install apache2"))
    struct StreamsOverH2Tests {
        static let piped = TransportTestSupport.randomData(size: 700_000, seed: 31)
        static let generated = TransportTestSupport.randomData(size: 300_000, seed: 32)

        /// A form with a value, an `InputStream` and an `AsyncSequence` part, both of unknown
        /// length, and the same form with the same boundary and the bytes as data: its body is
        /// what the streamed one must send.
        static func forms(_ server: H2ApacheServer, version: HTTPVersion) throws -> (streamed: FormDataRequest, body: Data) {
            func form(streamed: Bool) -> FormDataRequest {
                let request = FormDataRequest(url: server.url("/sha"))
                request.httpVersion = version
                request.timeOutSeconds = TransportTestSupport.patientTimeout
                if let certificate = server.certificate { request.trustedCertificates = [certificate] }
                request.multipartBoundary = "0xKhTmLbOuNdArY-STREAMS-OVER-H2"
                request.addPostValue("hello", forKey: "title")
                if streamed {
                    request.addStream(InputStream(data: piped), withFileName: "p.bin", andContentType: nil, forKey: "piped")
                    let pieces = stride(from: 0, to: generated.count, by: 65_000).map { generated[$0..<min($0 + 65_000, generated.count)] }
                    let sequence = AsyncStream<Data> { continuation in
                        for piece in pieces { continuation.yield(Data(piece)) }
                        continuation.finish()
                    }
                    request.addStream(sequence, withFileName: "g.bin", andContentType: nil, forKey: "generated")
                } else {
                    request.addData(piped, withFileName: "p.bin", andContentType: nil, forKey: "piped")
                    request.addData(generated, withFileName: "g.bin", andContentType: nil, forKey: "generated")
                }
                return request
            }
            let known = form(streamed: false)
            try known.buildPostBody()
            return (form(streamed: true), try #require(known.bodySource).readAll())
        }

        @Test(
            "A form with parts of unknown length goes over h2 and h2c as DATA frames, no content-length: the exact bytes at the server",
            arguments: [H2ApacheServer.Mode.h2, .h2c])
        func unknownLengthOverH2(mode: H2ApacheServer.Mode) async throws {
            try await H2ApacheServer.withServer(mode) { server in
                let (request, body) = try Self.forms(server, version: mode == .h2 ? .http2 : .http2PriorKnowledge)
                let response = try await request.start()
                #expect(response.httpVersion == .http2)
                #expect(!request.isPostLengthKnown)
                let answer = String(decoding: response.body, as: UTF8.self).split(separator: " ")
                    .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                // The script prints CONTENT_LENGTH, 0 when the request had none.
                #expect(answer == ["HTTP/2.0", "0", SHA256.hex(body)])
                #expect(request.totalBytesSent == UInt64(body.count))
            }
        }
    }
}
