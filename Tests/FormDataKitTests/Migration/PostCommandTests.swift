import FormDataKitTestSupport
import Foundation
import Testing

/// `formdata post --user`: bad input is a clear usage error (exit status 64), never a crash, and
/// a password never turns into the user name.
@Suite("formdata post --user")
struct PostCommandTests {
    @Test("an empty user name is refused with a message naming --user", arguments: ["", ":", ":secret"])
    func emptyUserRefused(option: String) async throws {
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let result = try await FormdataTool.run(tool, ["post", "http://127.0.0.1:9/x", "-F", "a=b", "--user", option])
        #expect(result.status == 64, "\(result.status): \(result.output)")
        #expect(result.output.contains("--user needs a user name"), "\(result.output)")
    }

    @Test("user:pass:with:colons keeps the colons in the password")
    func passwordWithColons() async throws {
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let server = try await EdgeServer()
        defer { server.stop() }
        let result = try await FormdataTool.run(
            tool, ["post", server.url(1, "/upload").absoluteString, "-F", "a=b", "--user", "alice:p:w", "--transport", "curl"])
        #expect(result.status == 0, "\(result.output)")
        // base64("alice:p:w")
        #expect(try server.log(1).first?.authorization == "Basic YWxpY2U6cDp3")
    }
}
