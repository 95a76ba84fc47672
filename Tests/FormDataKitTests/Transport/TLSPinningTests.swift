import Foundation
import FormDataKit
import FormDataKitAsyncHTTPClient
import FormDataKitTesting
import Testing

@Suite("HTTPS on loopback: trust-anchor pinning through the AsyncHTTPClient transport")
struct TLSPinningTests {
    /// Sends a small form to `server` through a transport trusting only `pinned` and returns the
    /// outcome. The transport is shut down afterwards.
    static func send(to server: HTTPSTestServer, pinning pinned: [String]) async throws -> Result<FormDataResponse, FormDataError> {
        let pins = try pinned.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let transport = AsyncHTTPClientTransport(configuration: try .init(pinning: TrustAnchorPinning(certificates: pins)))
        let request = FormDataRequest(url: server.url("/upload"))
        request.transport = transport
        request.setPostValue("pinned", forKey: "tls")
        let result: Result<FormDataResponse, FormDataError>
        do {
            result = .success(try await request.start())
        } catch {
            result = .failure(error)
        }
        try await transport.shutdown()
        return result
    }

    @Test("a pinned self-signed certificate is accepted; another certificate is rejected")
    func selfSignedPinning() async throws {
        let certificates = try await TransportTestSupport.blocking { try TestCertificates.make() }
        defer { certificates.remove() }
        let serverA = try await TransportTestSupport.blocking { try HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key) }
        defer { serverA.stop() }
        let serverB = try await TransportTestSupport.blocking { try HTTPSTestServer(certificateChain: certificates.selfSignedB.certificate, key: certificates.selfSignedB.key) }
        defer { serverB.stop() }

        let accepted = try await Self.send(to: serverA, pinning: [certificates.selfSignedA.certificate])
        let response = try accepted.get()
        #expect(response.statusCode == 200)
        let answer = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(answer?["bytes"] as? Int == "tls=pinned".utf8.count)

        let rejected = try await Self.send(to: serverB, pinning: [certificates.selfSignedA.certificate])
        guard case .failure(.connectionFailure(let underlying)) = rejected else {
            Issue.record("expected a connection failure, got \(rejected)")
            return
        }
        #expect(underlying.message.contains("CERTIFICATE_VERIFY_FAILED"), "\(underlying)")
    }

    @Test("\"only this CA\": a server whose chain ends in the pinned CA is accepted, a self-signed one is not")
    func certificateAuthorityPinning() async throws {
        let certificates = try await TransportTestSupport.blocking { try TestCertificates.make() }
        defer { certificates.remove() }
        let issued = try await TransportTestSupport.blocking { try HTTPSTestServer(certificateChain: certificates.issued.chain, key: certificates.issued.key) }
        defer { issued.stop() }
        let other = try await TransportTestSupport.blocking { try HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key) }
        defer { other.stop() }

        let accepted = try await Self.send(to: issued, pinning: [certificates.certificateAuthority])
        #expect(try accepted.get().statusCode == 200)
        let rejected = try await Self.send(to: other, pinning: [certificates.certificateAuthority])
        guard case .failure(.connectionFailure) = rejected else {
            Issue.record("expected a connection failure, got \(rejected)")
            return
        }
    }

    @Test("a certificate that is neither PEM nor DER is a typed configuration error")
    func invalidCertificate() {
        #expect(throws: AsyncHTTPClientTransportError.self) {
            _ = try AsyncHTTPClientTransport.Configuration(pinning: TrustAnchorPinning(certificates: [Data("junk".utf8)]))
        }
    }
}
