import Foundation
import FormDataKitTestSupport
import FormDataKit
import FormDataKitTesting
import Testing

/// `formdata post`'s network flags (curl's names) reach the request: a proxy with credentials, a
/// cookie jar file, pins; bad values are usage errors (exit status 64) naming the flag.
@Suite("formdata post network flags")
struct PostNetworkFlagsTests {
    static func tool() throws -> URL { try #require(FormdataTool.url(), "build the formdata tool first (swift build)") }

    @Test(
        "bad values are usage errors naming the flag",
        arguments: [
            (["--limit-rate", "0"], "--limit-rate"), (["--limit-rate", "fast"], "--limit-rate"),
            (["--pinnedpubkey", "md5//x"], "--pinnedpubkey"), (["--key", "/k.pem"], "--key needs --cert"),
            (["--proxy", "ftp://h:1"], "--proxy"), (["--proxy-user", ":pw"], "--proxy-user"),
            (["--cookie-jar", "/tmp/j", "--transport", "urlsession"], "--cookie-jar"),
        ])
    func badValues(arguments: [String], named: String) async throws {
        let result = try await FormdataTool.run(try Self.tool(), ["post", "http://127.0.0.1:9/x", "-F", "a=b"] + arguments)
        #expect(result.status == 64, "\(result.status): \(result.output)")
        #expect(result.output.contains(named), "\(result.output)")
    }

    @Test(
        "--proxy and --proxy-user send through tinyproxy; --cookie-jar keeps the cookie the answer set",
        .enabled(if: RealServers.tinyproxyMissing == nil || RealServers.required, "needs tinyproxy: sudo apt-get install tinyproxy"))
    func proxyAndCookieJar() async throws {
        let receiver = try await FormReceiver.start()
        let jar = NSTemporaryDirectory() + "fdk-cli-jar-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: jar) }
        try await TinyproxyServer.withServer(username: "cli", password: "cli-secret") { proxy in
            let result = try await FormdataTool.run(
                try Self.tool(),
                [
                    "post", receiver.url("/cookie?set=cli=1").absoluteString, "-F", "a=b",
                    "--proxy", proxy.proxyURL.absoluteString, "--proxy-user", "cli:cli-secret", "--cookie-jar", jar,
                ])
            #expect(result.status == 0, "\(result.output)")
        }
        let arrived = receiver.lastRequest
        await receiver.stop()
        #expect(arrived?.header("Via") != nil, "\(String(describing: arrived?.headers))")
        #expect(arrived?.form?.value("a") == "b")
        #expect((try? String(contentsOfFile: jar, encoding: .utf8))?.contains("cli\t1") == true)
    }

    @Test("--pinnedpubkey with the wrong key fails the send (exit 11: a connection failure)")
    func wrongPin() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { server.stop() }
        let other =
            NetworkPinning.publicKeyHash(ofCertificate: try Data(contentsOf: URL(fileURLWithPath: certificates.selfSignedB.certificate)))
            ?? ""
        let own =
            NetworkPinning.publicKeyHash(ofCertificate: try Data(contentsOf: URL(fileURLWithPath: certificates.selfSignedA.certificate)))
            ?? ""
        let base = ["post", server.url("/upload").absoluteString, "-F", "a=b", "--cacert", certificates.selfSignedA.certificate]
        let wrong = try await FormdataTool.run(try Self.tool(), base + ["--pinnedpubkey", other])
        #expect(wrong.status == 11, "\(wrong.output)")
        #expect(wrong.output.lowercased().contains("pinned public key"), "\(wrong.output)")
        let right = try await FormdataTool.run(try Self.tool(), base + ["--pinnedpubkey", "\(other);\(own)"])
        #expect(right.status == 0, "\(right.output)")
    }
}
