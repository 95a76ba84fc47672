import FormDataKitTestSupport
import Foundation
import Testing

/// `formdata post` prints what a server sent — the reason phrase, headers, the body on a
/// terminal — with its control characters escaped (as `formdata serve` escapes what a client
/// sent): a server cannot recolour, retitle or clear the terminal the tool runs in.
@Suite("formdata post: a server's control characters never reach the terminal")
struct PostOutputEscapingTests {
    /// ESC and BEL: the bytes that start every terminal escape sequence edge_server.py sends.
    static func controlBytes(in text: String) -> [String] {
        text.unicodeScalars.filter { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" }.map { String($0.value, radix: 16) }
    }

    /// The tool's `--transport` names this build has (asynchttpclient only with the trait).
    static var toolTransports: [String] {
        #if AsyncHTTPClient
        return ["curl", "urlsession", "asynchttpclient"]
        #else
        return ["curl", "urlsession"]
        #endif
    }

    @Test(
        "the reason phrase and header values from the server are printed escaped, over every transport",
        arguments: toolTransports)
    func reasonPhraseAndHeadersEscaped(transport: String) async throws {
        let tool = try PostNetworkFlagsTests.tool()
        let server = try await EdgeServer()
        defer { server.stop() }
        let result = try await ChildProcess.run(
            tool.path, ["post", server.url(1, "/control-characters").absoluteString, "-F", "a=b", "--transport", transport])
        let head = String(decoding: result.stderr, as: UTF8.self)
        #expect(Self.controlBytes(in: head).isEmpty, "\(head.debugDescription)")
        if transport == "asynchttpclient" {
            // SwiftNIO's HTTP parser refuses a control character in a header: a connection
            // failure (exit 11), whose message is escaped too.
            #expect(result.status == 11 && head.contains("invalid character in header"), "\(head.debugDescription)")
            return
        }
        #expect(result.status == 0 && !result.signalled, "\(head.debugDescription)")
        // What the transport passes on arrives escaped, not dropped: the header, and the reason
        // phrase where the transport keeps it (libcurl does; URLSession on Linux gives "OK").
        #expect(head.contains(#"X-Note: \u{1B}[2Jcleared\u{7}"#), "\(head.debugDescription)")
        if transport == "curl" {
            #expect(head.contains(#"200 Fine \u{1B}]0;title\u{7}\u{1B}[31m"#), "\(head.debugDescription)")
        }
        // Piped, the body is data: its bytes go out exactly as the server sent them.
        #expect(result.stdout == Data("body \u{1B}[31mred\u{07}\u{1B}]0;pwned\u{07}\n".utf8), "\(result.stdout)")
    }

    @Test("on a terminal (a pseudo-terminal from script(1)), the body is printed escaped too")
    func bodyEscapedOnATerminal() async throws {
        let tool = try PostNetworkFlagsTests.tool()
        let script = try #require(
            ["/usr/bin/script", "/bin/script"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "script(1) is needed for a pseudo-terminal (apt-get install bsdutils)")
        let server = try await EdgeServer()
        defer { server.stop() }
        let command = [tool.path, "post", server.url(1, "/control-characters").absoluteString, "-F", "a=b", "--transport", "curl"]
            .map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }.joined(separator: " ")
        let result = try await FormdataTool.run(URL(fileURLWithPath: script), ["-q", "-e", "-c", command, "/dev/null"])
        #expect(result.status == 0, "\(result.output.debugDescription)")
        #expect(Self.controlBytes(in: result.output).isEmpty, "\(result.output.debugDescription)")
        #expect(result.output.contains(#"body \u{1B}[31mred\u{7}\u{1B}]0;pwned\u{7}"#), "\(result.output.debugDescription)")
    }
}
