import Foundation
import FormDataKitTestSupport
import Testing

extension HTTP2Suites {
    /// `formdata post --http1.1 | --http2 | --http2-prior-knowledge` against Apache with mod_http2:
    /// the version asked for is the version spoken, the status line says which, a refused `--http2`
    /// is a connection failure (exit 11) naming why, and two of the flags are a usage error.
    @Suite(
        "formdata post HTTP version flags",
        .enabled(if: H2ApacheServer.missing == nil || RealServers.required, "needs Apache with mod_http2: apt-get install apache2"),
        .serialized)
    struct HTTPVersionCLITests {
        static func tool() throws -> URL { try #require(FormdataTool.url(), "build the formdata tool first (swift build)") }

        static func post(_ server: H2ApacheServer, _ flags: [String]) async throws -> (status: Int32, output: String) {
            let trust = server.certificatePath.map { ["--cacert", $0] } ?? []
            return try await FormdataTool.run(try tool(), ["post", server.url("/sha").absoluteString, "-F", "a=b"] + trust + flags)
        }

        @Test("--http2 and --http1.1 over TLS, --http2-prior-knowledge over cleartext: the status line and the server say the version")
        func versions() async throws {
            try await H2ApacheServer.withServer(.h2) { server in
                let h2 = try await Self.post(server, ["--http2"])
                #expect(h2.status == 0, "\(h2.output)")
                #expect(h2.output.hasPrefix("HTTP/2 200"), "\(h2.output)")
                #expect(h2.output.contains("HTTP/2.0 "), "\(h2.output)")
                let h1 = try await Self.post(server, ["--http1.1"])
                #expect(h1.status == 0, "\(h1.output)")
                #expect(h1.output.hasPrefix("HTTP/1.1 200"), "\(h1.output)")
                #expect(h1.output.contains("HTTP/1.1 "), "\(h1.output)")
            }
            try await H2ApacheServer.withServer(.h2c) { server in
                let h2c = try await Self.post(server, ["--http2-prior-knowledge"])
                #expect(h2c.status == 0, "\(h2c.output)")
                #expect(h2c.output.hasPrefix("HTTP/2 200"), "\(h2c.output)")
            }
        }

        @Test("--http2 to an HTTP/1.1-only server fails with exit 11 naming the refusal; nothing reaches the script")
        func refused() async throws {
            try await H2ApacheServer.withServer(.http1TLS) { server in
                let result = try await Self.post(server, ["--http2"])
                #expect(result.status == 11, "\(result.output)")
                #expect(result.output.contains("did not agree to HTTP/2"), "\(result.output)")
                #expect(server.log.filter { $0.method == "POST" }.isEmpty, "\(server.log)")
            }
        }

        @Test("two version flags are a usage error")
        func exclusive() async throws {
            let result = try await FormdataTool.run(try Self.tool(), ["post", "http://127.0.0.1:9/x", "-F", "a=b", "--http2", "--http1.1"])
            #expect(result.status == 64, "\(result.output)")
            #expect(result.output.contains("exclude each other"), "\(result.output)")
        }
    }
}
