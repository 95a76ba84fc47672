@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import FormDataKit

/// How `URLSessionTransport` answers authentication challenges — unit-tested on Linux with
/// fabricated protection spaces, since CI cannot run Apple platforms (where a server-trust
/// challenge reaches the task-level delegate method).
@Suite("URLSession challenges: server trust gets the system's checks, credential challenges fail the send")
struct URLSessionChallengeTests {
    static func space(_ method: String, protocol scheme: String = "https") -> URLProtectionSpace {
        URLProtectionSpace(host: "example.com", port: 443, protocol: scheme, realm: "r", authenticationMethod: method)
    }

    @Test("server trust is default handling (not cancelled: that would fail every HTTPS request)")
    func serverTrust() {
        #expect(SessionDelegate.disposition(for: Self.space("NSURLAuthenticationMethodServerTrust")) == .performDefaultHandling)
    }

    @Test(
        "credential challenges are cancelled (credentials go pre-emptively; the send fails as authenticationNeeded)",
        arguments: [
            NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
            NSURLAuthenticationMethodDefault, "NSURLAuthenticationMethodClientCertificate",
        ])
    func credentialChallenges(method: String) {
        #expect(SessionDelegate.disposition(for: Self.space(method, protocol: "http")) == .cancelAuthenticationChallenge)
    }
}
