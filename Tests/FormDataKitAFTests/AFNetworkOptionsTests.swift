import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `AFHTTPSessionManager.securityPolicy` and `throttleBandwidth` through the curl transport.
@Suite("AFHTTPSessionManager over curl: securityPolicy (public key, certificate) and throttleBandwidth")
struct AFNetworkOptionsTests {
    /// POSTs a form with a small file through a curl-backed manager with `policy`; the answer's
    /// status (the HTTPS test server answers JSON) or the error.
    static func post(to url: URL, policy: AFSecurityPolicy, transport: any FormDataTransport = CurlTransport()) async -> Result<
        Int, any Error
    > {
        let manager = AFHTTPSessionManager(baseURL: url, sessionConfiguration: nil, transport: transport)
        manager.securityPolicy = policy
        return await withCheckedContinuation { continuation in
            _ = manager.post(
                "upload", parameters: ["a": "1"], headers: nil,
                constructingBodyWith: { form in
                    form.appendPart(
                        withFileData: Data(repeating: 3, count: 10_000), name: "file", fileName: "f.bin",
                        mimeType: "application/octet-stream")
                }, progress: nil,
                success: { task, _ in
                    continuation.resume(returning: .success(task.response?.statusCode ?? 0))
                },
                failure: { _, error in
                    continuation.resume(returning: .failure(error))
                })
        }
    }

    @Test("publicKey mode: the pinned key's server is accepted, another server is refused")
    func publicKeyMode() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let serverA = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { serverA.stop() }
        let serverB = try await HTTPSTestServer(certificateChain: certificates.selfSignedB.certificate, key: certificates.selfSignedB.key)
        defer { serverB.stop() }
        let policy = AFSecurityPolicy.policy(
            withPinningMode: .publicKey,
            withPinnedCertificates: [try TestCertificates.der(ofPEM: certificates.selfSignedA.certificate)])
        policy.allowInvalidCertificates = true  // self-signed: the key pin is the check, as AF code does it
        let accepted = await Self.post(to: serverA.url("/"), policy: policy)
        #expect((try? accepted.get()) == 200, "\(accepted)")
        let refused = await Self.post(to: serverB.url("/"), policy: policy)
        guard case .failure(let error) = refused else {
            Issue.record("a server with another key was accepted")
            return
        }
        #expect(String(describing: error).lowercased().contains("pinned public key"), "\(error)")
    }

    @Test("certificate mode pinning a CA-issued leaf: its server is accepted, a self-signed one refused")
    func certificateModeLeaf() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let issued = try await HTTPSTestServer(certificateChain: certificates.issued.chain, key: certificates.issued.key)
        defer { issued.stop() }
        let other = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { other.stop() }
        let policy = AFSecurityPolicy.policy(
            withPinningMode: .certificate,
            withPinnedCertificates: [try TestCertificates.der(ofPEM: certificates.issued.leaf)])
        let accepted = await Self.post(to: issued.url("/"), policy: policy)
        #expect((try? accepted.get()) == 200, "\(accepted)")
        let refused = await Self.post(to: other.url("/"), policy: policy)
        guard case .failure = refused else {
            Issue.record("a server whose chain has no pinned certificate was accepted")
            return
        }
    }

    @Test("a policy other than the default with a transport that cannot apply it fails the task, naming securityPolicy")
    func policyNeedsCurl() async throws {
        let receiver = try await FormReceiver.start()
        let policy = AFSecurityPolicy.policy(withPinningMode: .none)
        policy.allowInvalidCertificates = true
        let outcome = await Self.post(to: receiver.url("/"), policy: policy, transport: URLSessionTransport())
        await receiver.stop()
        guard case .failure(let error) = outcome else {
            Issue.record("sent without the policy")
            return
        }
        #expect(String(describing: error).contains("securityPolicy"), "\(error)")
        #expect(receiver.requests.isEmpty)
    }

    /// Records what it is asked to send and answers 200 at once.
    final class RecordingTransport: FormDataTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [TransportRequest] = []
        var requests: [TransportRequest] { lock.withLock { recorded } }
        var capabilities: TransportCapabilities {
            [.challengeAuthentication, .customTrust, .publicKeyPinning, .bandwidthLimit, .decodesContentEncoding]
        }
        struct Task: TransportTask { func cancel() {} }
        func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
            lock.withLock { recorded.append(request) }
            Thread.detachNewThread {
                observer.transportDidReceive(
                    FormDataResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8)))
            }
            return Task()
        }
    }

    @Test("throttleBandwidth(withPacketSize:delay:) reaches the transport as bytes per second")
    func throttleReachesTheTransport() async throws {
        let transport = RecordingTransport()
        let manager = AFHTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:9/"), sessionConfiguration: nil, transport: transport)
        let done: Bool = await withCheckedContinuation { continuation in
            _ = manager.post(
                "upload", parameters: nil, headers: nil,
                constructingBodyWith: { form in
                    form.appendPart(
                        withFileData: Data(repeating: 1, count: 1000), name: "f", fileName: "f.bin", mimeType: "application/octet-stream")
                    form.throttleBandwidth(withPacketSize: 16 * 1024, delay: 0.2)
                }, progress: nil, success: { _, _ in continuation.resume(returning: true) },
                failure: { _, _ in continuation.resume(returning: false) })
        }
        #expect(done)
        #expect(transport.requests.first?.network.maximumUploadBytesPerSecond == 81_920)
    }

    @Test("httpShouldHandleCookies = false reaches the transport as no cookie jar; the default uses it")
    func cookiesSetting() async throws {
        let transport = RecordingTransport()
        let manager = AFHTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:9/"), sessionConfiguration: nil, transport: transport)
        for handles in [true, false] {
            manager.requestSerializer.httpShouldHandleCookies = handles ? nil : false
            let done: Bool = await withCheckedContinuation { continuation in
                _ = manager.get(
                    "x", parameters: nil, headers: nil, progress: nil,
                    success: { _, _ in continuation.resume(returning: true) },
                    failure: { _, _ in continuation.resume(returning: false) })
            }
            #expect(done)
            #expect(transport.requests.last?.network.usesCookieJar == handles)
        }
    }
}
