import Foundation
import FormDataKit
import FormDataKitTestSupport
import Testing

extension HTTP2Suites {
    /// A stream the server turns away unprocessed (RFC 9113 §8.7) — `RST_STREAM(REFUSED_STREAM)`, or
    /// `GOAWAY` whose last stream id is below it — against `refusing_h2c_server.py` (h2c): sent again
    /// only where the no-double-post rules allow, and never processed twice.
    @Suite("Refused streams and GOAWAY (curl transport, h2c)")
    struct RefusedStreamTests {
        /// The server in `mode`, its log file, and a form to it.
        static func withServer(_ mode: String, _ body: (URL, () -> [String]) async throws -> Void) async throws {
            let log = NSTemporaryDirectory() + "fdk-h2-refused-\(UUID().uuidString).log"
            _ = FileManager.default.createFile(atPath: log, contents: Data())
            defer { try? FileManager.default.removeItem(atPath: log) }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("refusing_h2c_server.py").path
            let server = try await PortAnnouncingProcess(arguments: ["python3", script, mode, log]) { text in
                TransportTestSupport.Failure(description: "refusing_h2c_server.py did not start: \(text)")
            }
            defer { server.stop() }
            let lines = { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
            try await body(URL(string: "http://127.0.0.1:\(server.ports[0])/form")!, lines)
        }

        static func form(_ url: URL, keyed: Bool, policy: RetryPolicy? = nil) throws -> (FormDataRequest, Data) {
            let request = FormDataRequest(url: url)
            request.transport = CurlTransport()
            request.httpVersion = .http2PriorKnowledge
            request.timeOutSeconds = TransportTestSupport.patientTimeout
            request.shouldSendIdempotencyKey = keyed
            request.retryPolicy = policy
            request.setPostValue("refused once", forKey: "a")
            request.addData(TransportTestSupport.randomData(size: 10_000, seed: 3), withFileName: "b.bin", andContentType: nil, forKey: "b")
            try request.buildPostBody()
            return (request, try #require(request.bodySource).readAll())
        }

        @Test("REFUSED_STREAM: a request with an Idempotency-Key is sent again by libcurl on a new connection and processed once")
        func refusedKeyed() async throws {
            try await Self.withServer("refuse") { url, log in
                let (request, body) = try Self.form(url, keyed: true)
                let response = try await request.start()
                #expect(String(decoding: response.body, as: UTF8.self) == "\(body.count) \(SHA256.hex(body))\n")
                #expect(response.httpVersion == .http2)
                #expect(log() == ["refused", "answered \(body.count) \(SHA256.hex(body))"])
            }
        }

        @Test(
            "REFUSED_STREAM: a POST without a key fails as a connection failure, even with a RetryPolicy; libcurl's repeat is refused, nothing is processed"
        )
        func refusedUnkeyed() async throws {
            try await Self.withServer("refuse") { url, log in
                let (request, _) = try Self.form(url, keyed: false, policy: RetryPolicy(backoff: .none))
                let outcome = await TransportTestSupport.outcome(of: request)
                guard case .failure(.connectionFailure(let underlying)) = outcome else {
                    Issue.record("expected a connection failure, got \(outcome)")
                    return
                }
                #expect(underlying.message.contains("not safe to repeat"), "\(underlying.message)")
                #expect(log() == ["refused"])
            }
        }

        @Test(
            "GOAWAY below the stream: libcurl 7.88 fails it (libcurl 16); a RetryPolicy sends a keyed request again, never a POST without one"
        )
        func goaway() async throws {
            try await Self.withServer("goaway") { url, log in
                let (unkeyed, _) = try Self.form(url, keyed: false, policy: RetryPolicy(backoff: .none))
                let failed = await TransportTestSupport.outcome(of: unkeyed)
                guard case .failure(.connectionFailure(let underlying)) = failed, underlying.code == 16 else {
                    Issue.record("expected libcurl 16, got \(failed)")
                    return
                }
                #expect(log() == ["goaway"])
            }
            try await Self.withServer("goaway") { url, log in
                let (keyed, body) = try Self.form(url, keyed: true, policy: RetryPolicy(backoff: .none))
                let response = try await keyed.start()
                #expect(String(decoding: response.body, as: UTF8.self) == "\(body.count) \(SHA256.hex(body))\n")
                #expect(keyed.retryCount == 1)
                #expect(log() == ["goaway", "answered \(body.count) \(SHA256.hex(body))"])
            }
        }
    }
}
