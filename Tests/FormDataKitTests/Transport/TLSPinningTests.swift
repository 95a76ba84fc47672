import Foundation
import FormDataKit
#if AsyncHTTPClient
import FormDataKitAsyncHTTPClient
#endif
import FormDataKitTestSupport
import FormDataKitTesting
import Testing

@Suite("HTTPS on loopback: trust-anchor pinning through the curl and AsyncHTTPClient transports")
struct TLSPinningTests {
    /// The transports that take trust anchors.
    typealias Kind = StreamingTransportKind

    /// Sends a small form to `url` through a `kind` transport trusting only `pinned` and returns
    /// the outcome. The transport is shut down afterwards.
    static func send(to url: URL, pinning pinned: [String], kind: Kind) async throws -> Result<FormDataResponse, FormDataError> {
        let pins = try pinned.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let trust = TrustAnchorPinning(certificates: pins)
        let ahc = kind == .asyncHTTPClient ? try TransportTestSupport.newAsyncHTTPClient(pinning: trust) : nil
        let request = FormDataRequest(url: url)
        request.transport = ahc?.transport ?? CurlTransport(configuration: .init(trust: trust))
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        request.setPostValue("pinned", forKey: "tls")
        let result: Result<FormDataResponse, FormDataError>
        do {
            result = .success(try await request.start())
        } catch {
            result = .failure(error)
        }
        try await ahc?.shutdown()
        return result
    }

    static func send(to server: HTTPSTestServer, pinning pinned: [String], kind: Kind) async throws -> Result<
        FormDataResponse, FormDataError
    > {
        try await send(to: server.url("/upload"), pinning: pinned, kind: kind)
    }

    @Test("a pinned self-signed certificate is accepted; another certificate is rejected", arguments: Kind.allCases)
    func selfSignedPinning(kind: Kind) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let serverA = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { serverA.stop() }
        let serverB = try await HTTPSTestServer(certificateChain: certificates.selfSignedB.certificate, key: certificates.selfSignedB.key)
        defer { serverB.stop() }

        let accepted = try await Self.send(to: serverA, pinning: [certificates.selfSignedA.certificate], kind: kind)
        let response = try accepted.get()
        #expect(response.statusCode == 200)
        let answer = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(answer?["bytes"] as? Int == "tls=pinned".utf8.count)

        let rejected = try await Self.send(to: serverB, pinning: [certificates.selfSignedA.certificate], kind: kind)
        guard case .failure(.connectionFailure(let underlying)) = rejected else {
            Issue.record("expected a connection failure, got \(rejected)")
            return
        }
        // AsyncHTTPClient: BoringSSL's CERTIFICATE_VERIFY_FAILED; curl: "SSL certificate problem: …".
        #expect(underlying.message.contains(kind == .curl ? "certificate" : "CERTIFICATE_VERIFY_FAILED"), "\(underlying)")
    }

    @Test(
        "\"only this CA\": a server whose chain ends in the pinned CA is accepted, a self-signed one is not",
        arguments: Kind.allCases)
    func certificateAuthorityPinning(kind: Kind) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let issued = try await HTTPSTestServer(certificateChain: certificates.issued.chain, key: certificates.issued.key)
        defer { issued.stop() }
        let other = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { other.stop() }

        let accepted = try await Self.send(to: issued, pinning: [certificates.certificateAuthority], kind: kind)
        #expect(try accepted.get().statusCode == 200)
        let rejected = try await Self.send(to: other, pinning: [certificates.certificateAuthority], kind: kind)
        guard case .failure(.connectionFailure) = rejected else {
            Issue.record("expected a connection failure, got \(rejected)")
            return
        }
    }

    @Test("a redirect from https to http is refused, naming both URLs", arguments: Kind.allCases)
    func httpsToHTTPRefused(kind: Kind) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { server.stop() }
        let plain = try await FormReceiver.start(host: "127.0.0.2")
        let target = plain.url("/upload")
        let escaped = target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let outcome = try await Self.send(
            to: server.url("/redirect?to=\(escaped)"),
            pinning: [certificates.selfSignedA.certificate], kind: kind)
        let received = plain.requests.count
        await plain.stop()
        guard case .failure(.redirectRefused(let from, let to, _)) = outcome else {
            Issue.record("expected redirectRefused, got \(outcome)")
            return
        }
        #expect(from.hasPrefix("https://127.0.0.1:"))
        #expect(to == target.absoluteString)
        #expect(received == 0)
    }

    #if AsyncHTTPClient
    @Test("a certificate that is neither PEM nor DER is a typed configuration error")
    func invalidCertificate() {
        #expect(throws: AsyncHTTPClientTransportError.self) {
            _ = try AsyncHTTPClientTransport.Configuration(pinning: TrustAnchorPinning(certificates: [Data("junk".utf8)]))
        }
    }
    #endif
}
