import Foundation
import FormDataKit
import FormDataKitAF
import FormDataKitTestSupport
import Testing

extension HTTP2Suites {
    /// `AFHTTPSessionManager.httpVersion` over the curl transport against Apache with mod_http2 (h2c).
    @Suite(
        "AFHTTPSessionManager.httpVersion (curl transport, Apache mod_http2)",
        .enabled(if: H2ApacheServer.missing == nil || RealServers.required, "needs Apache with mod_http2: apt-get install apache2"))
    struct AFHTTPVersionTests {
        /// POSTs a form to `/sha` and returns the body, or the error.
        static func post(_ manager: AFHTTPSessionManager) async -> Result<String, any Error> {
            await withCheckedContinuation { continuation in
                _ = manager.post(
                    "sha", parameters: ["a": "1"], headers: nil,
                    constructingBodyWith: { form in form.appendPart(withForm: Data("part".utf8), name: "b") }, progress: nil,
                    success: { _, object in
                        continuation.resume(returning: .success(String(decoding: object as? Data ?? Data(), as: UTF8.self)))
                    },
                    failure: { _, error in continuation.resume(returning: .failure(error)) })
            }
        }

        @Test(
            "the manager's httpVersion reaches every task: h2c with .http2PriorKnowledge, HTTP/1.1 by default, .http2 refused over cleartext"
        )
        func managerVersion() async throws {
            try await H2ApacheServer.withServer(.h2c) { server in
                let manager = AFHTTPSessionManager(baseURL: server.url("/"), sessionConfiguration: nil, transport: CurlTransport())
                manager.responseSerializer = AFHTTPResponseSerializer()
                let automatic = try await Self.post(manager).get()
                #expect(automatic.hasPrefix("HTTP/1.1 "), "\(automatic)")
                manager.httpVersion = .http2PriorKnowledge
                let h2c = try await Self.post(manager).get()
                #expect(h2c.hasPrefix("HTTP/2.0 "), "\(h2c)")
                #expect(manager.copy().httpVersion == .http2PriorKnowledge)
                manager.httpVersion = .http2
                let refused = await Self.post(manager)
                guard case .failure(let error as AFNetworkError) = refused,
                    case .httpVersionNotNegotiated(_, requested: .http2) = error.underlying
                else {
                    Issue.record("expected httpVersionNotNegotiated, got \(refused)")
                    return
                }
                #expect(await server.log(atLeast: 2).count == 2)
            }
        }
    }
}
