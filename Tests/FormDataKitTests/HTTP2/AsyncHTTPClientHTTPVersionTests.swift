#if AsyncHTTPClient
import Foundation
import FormDataKit
import FormDataKitAsyncHTTPClient
import FormDataKitTestSupport
import Testing

extension HTTP2Suites {
    /// The AsyncHTTPClient transport against Apache with mod_http2: its client speaks h2 over TLS
    /// when offered (one connection for concurrent forms) and HTTP/1.1 otherwise, reports the version
    /// on each response, and refuses a request's other `httpVersion` before sending, naming it.
    @Suite(
        "HTTP versions over AsyncHTTPClient (Apache mod_http2)",
        .enabled(if: H2ApacheServer.missing == nil || RealServers.required, "needs Apache with mod_http2: apt-get install apache2"),
        .serialized)
    struct AsyncHTTPClientHTTPVersionTests {
        static func transport(_ server: H2ApacheServer) throws -> AsyncHTTPClientTransport {
            AsyncHTTPClientTransport(
                configuration: try .init(pinning: TrustAnchorPinning(certificates: [try #require(server.certificate)])))
        }

        @Test(
            "h2 over TLS when offered, HTTP/1.1 otherwise; the response says which and the server agrees",
            arguments: [H2ApacheServer.Mode.h2, .http1TLS])
        func negotiated(mode: H2ApacheServer.Mode) async throws {
            try await H2ApacheServer.withServer(mode) { server in
                let transport = try Self.transport(server)
                let (request, body) = try HTTPVersionTests.form(server, "/sha", version: .automatic, transport: transport)
                let response = try await request.start()
                let expected: ResponseHTTPVersion = mode == .h2 ? .http2 : .http1_1
                #expect(response.httpVersion == expected)
                #expect(request.responseHTTPVersion == expected)
                #expect(
                    HTTPVersionTests.answer(response) == [HTTPVersionTests.serverProtocol(expected), "\(body.count)", SHA256.hex(body)])
                try await transport.shutdown()
            }
        }

        @Test("a request's httpVersion other than .automatic fails before sending, naming it")
        func refusesOtherVersions() async throws {
            try await H2ApacheServer.withServer(.h2) { server in
                let transport = try Self.transport(server)
                for version in [HTTPVersion.http1_1, .http2, .http2PriorKnowledge] {
                    let (request, _) = try HTTPVersionTests.form(server, "/sha", version: version, transport: transport)
                    let outcome = await TransportTestSupport.outcome(of: request)
                    guard case .failure(.unableToCreateRequest(let underlying)) = outcome else {
                        Issue.record("\(version): expected unableToCreateRequest, got \(outcome)")
                        continue
                    }
                    #expect(underlying.message.contains("httpVersion = .\(version)"), "\(underlying.message)")
                }
                #expect(server.log.isEmpty, "\(server.log)")
                try await transport.shutdown()
            }
        }

        @Test("64 concurrent forms to one h2 origin: one connection, each stream's bytes exact")
        func multiplexed() async throws {
            try await H2ApacheServer.withServer(.h2) { server in
                let transport = try Self.transport(server)
                let sends = try (0..<64).map { index in
                    try HTTPVersionTests.form(
                        server, "/sha", version: .automatic, transport: transport, size: 3_000 + index * 501, seed: UInt64(index + 1))
                }
                await withTaskGroup(of: Void.self) { group in
                    for send in sends {
                        group.addTask {
                            let outcome = await TransportTestSupport.outcome(of: send.request)
                            guard case .success(let response) = outcome else {
                                Issue.record("\(outcome)")
                                return
                            }
                            #expect(HTTPVersionTests.answer(response) == ["HTTP/2.0", "\(send.body.count)", SHA256.hex(send.body)])
                        }
                    }
                }
                let posts = await server.log(atLeast: 64)
                #expect(posts.count == 64)
                #expect(Set(posts.map(\.clientPort)).count == 1, "connections: \(Set(posts.map(\.clientPort)))")
                try await transport.shutdown()
            }
        }
    }
}
#endif
