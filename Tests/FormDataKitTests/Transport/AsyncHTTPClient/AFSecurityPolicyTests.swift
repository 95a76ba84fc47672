#if AsyncHTTPClient
import FormDataKit
import FormDataKitAF
import FormDataKitAsyncHTTPClient
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
import Testing

@Suite("AFSecurityPolicy mapped onto AsyncHTTPClient trust-anchor pinning")
struct AFSecurityPolicyTests {
    /// What the HTTPS test server answered.
    struct Answer: Sendable {
        var method: String?
        var bytes: Int
    }

    /// POSTs a multipart form through a manager whose transport applies `policy`; returns the
    /// response object (parsed JSON) or the error.
    static func post(to server: HTTPSTestServer, policy: AFSecurityPolicy, file: URL) async throws -> Result<Answer, any Error> {
        let transport = AsyncHTTPClientTransport(configuration: try .init(pinning: try policy.trustAnchorPinning()))
        let manager = AFHTTPSessionManager(baseURL: server.url("/"), sessionConfiguration: nil, transport: transport)
        let result: Result<Answer, any Error> = await withCheckedContinuation { continuation in
            _ = manager.post(
                "upload", parameters: ["a": "1"], headers: nil,
                constructingBodyWith: { form in
                    // A file part: streamed by the AsyncHTTPClient transport, never spooled.
                    try form.appendPart(withFileURL: file, name: "file")
                }, progress: nil,
                success: { _, object in
                    let value = object as? [String: Any] ?? [:]
                    continuation.resume(
                        returning: .success(
                            Answer(
                                method: value["method"] as? String,
                                bytes: value["bytes"] as? Int ?? 0)))
                },
                failure: { _, error in
                    continuation.resume(returning: .failure(error))
                })
        }
        try await transport.shutdown()
        return result
    }

    @Test("certificate mode pinning the server's self-signed certificate (DER): accepted; another server: rejected")
    func certificateMode() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let serverA = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { serverA.stop() }
        let serverB = try await HTTPSTestServer(certificateChain: certificates.selfSignedB.certificate, key: certificates.selfSignedB.key)
        defer { serverB.stop() }
        let file = URL(fileURLWithPath: certificates.directory + "/upload.bin")
        try Data(repeating: 7, count: 2_000_000).write(to: file)
        let policy = AFSecurityPolicy.policy(
            withPinningMode: .certificate,
            withPinnedCertificates: [try TestCertificates.der(ofPEM: certificates.selfSignedA.certificate)])

        let accepted = try await Self.post(to: serverA, policy: policy, file: file)
        let object = try accepted.get()
        #expect(object.method == "POST")
        #expect(object.bytes > 2_000_000)
        let rejected = try await Self.post(to: serverB, policy: policy, file: file)
        guard case .failure = rejected else {
            Issue.record("a server with another certificate was accepted")
            return
        }
    }

    @Test("certificate mode pinning a CA works; pinning a CA-issued leaf or a public key is unsupported")
    func unsupportedModes() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let ca = try TestCertificates.der(ofPEM: certificates.certificateAuthority)
        let leaf = try TestCertificates.der(ofPEM: certificates.issued.leaf)

        let caPolicy = AFSecurityPolicy.policy(withPinningMode: .certificate, withPinnedCertificates: [ca])
        #expect(try caPolicy.trustAnchorPinning().certificates == [ca])

        let leafPolicy = AFSecurityPolicy.policy(withPinningMode: .certificate, withPinnedCertificates: [leaf])
        #expect(throws: AFSecurityPolicyError.leafPinningUnsupported(index: 0)) { try leafPolicy.trustAnchorPinning() }

        let keyPolicy = AFSecurityPolicy.policy(withPinningMode: .publicKey, withPinnedCertificates: [ca])
        #expect(throws: AFSecurityPolicyError.publicKeyPinningUnsupported) { try keyPolicy.trustAnchorPinning() }
        #expect(String(describing: AFSecurityPolicyError.publicKeyPinningUnsupported).contains("AsyncHTTPClient"))

        let empty = AFSecurityPolicy.policy(withPinningMode: .certificate)
        #expect(throws: AFSecurityPolicyError.noPinnedCertificates) { try empty.trustAnchorPinning() }

        let none = AFSecurityPolicy.default()
        none.validatesDomainName = false
        let pinning = try none.trustAnchorPinning()
        #expect(pinning.certificates.isEmpty)
        #expect(!pinning.validatesDomainName)
    }
}
#endif
