import FormDataKit
import Foundation

/// AFNetworking's `AFSSLPinningMode`: what a security policy pins.
public enum AFSSLPinningMode: Int, Sendable, Equatable {
    /// No pinning: the system trust store decides (AF: `AFSSLPinningModeNone`).
    case none = 0
    /// The server's key must be the public key of a pinned certificate
    /// (AF: `AFSSLPinningModePublicKey`). Through `CurlTransport` (``AFSecurityPolicy/networkOptions()``):
    /// the leaf's key is compared (AF compared every key of the chain). Not through AsyncHTTPClient.
    case publicKey = 1
    /// The server's chain must contain a pinned certificate (AF: `AFSSLPinningModeCertificate`):
    /// the pinned certificates are the only trust anchors (through AsyncHTTPClient, self-signed
    /// ones only; through `CurlTransport`, a CA-issued leaf too).
    case certificate = 2
}

/// Why an ``AFSecurityPolicy`` cannot be applied to a FormDataKit transport.
public enum AFSecurityPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `AFSSLPinningModePublicKey`: public-key (SPKI) pinning needs a certificate-verification
    /// callback, which AsyncHTTPClient does not expose.
    case publicKeyPinningUnsupported
    /// `AFSSLPinningModeCertificate` with a pinned certificate that is not self-signed (a leaf or
    /// an intermediate issued by a CA): BoringSSL accepts only self-signed roots as trust
    /// anchors, and leaf pinning needs the verification callback AsyncHTTPClient does not expose.
    case leafPinningUnsupported(index: Int)
    /// `AFSSLPinningModeCertificate` with no pinned certificates (AF rejected every server then).
    case noPinnedCertificates
    /// Pinned certificate `index` (in byte order) is not an X.509 certificate (PEM or DER).
    case unreadableCertificate(index: Int)

    /// What is unsupported and why.
    public var description: String {
        switch self {
        case .publicKeyPinningUnsupported:
            return "AFSSLPinningModePublicKey is unsupported: public-key pinning needs a certificate-verification "
                + "callback, which AsyncHTTPClient does not expose. Pin the self-signed certificate or the CA instead."
        case .leafPinningUnsupported(let index):
            return "Pinned certificate \(index) is not self-signed: pinning a CA-issued leaf needs a "
                + "certificate-verification callback, which AsyncHTTPClient does not expose. Pin its root CA instead."
        case .noPinnedCertificates:
            return "AFSSLPinningModeCertificate with no pinned certificates would reject every server"
        case .unreadableCertificate(let index):
            return "Pinned certificate \(index) is not an X.509 certificate (PEM or DER)"
        }
    }
}

/// AFNetworking's `AFSecurityPolicy`, mapped onto trust-anchor pinning.
///
/// FormDataKit applies it through the AsyncHTTPClient transport: build a
/// `TrustAnchorPinning` with ``trustAnchorPinning()`` and create the transport with it
/// (`AsyncHTTPClientTransport(configuration: try .init(pinning: pinning))`), then pass the
/// transport to ``AFHTTPSessionManager/init(baseURL:sessionConfiguration:transport:)``.
/// Certificate mode works when each pinned certificate is self-signed (the server's own
/// self-signed certificate, or the CA that issued it); leaf and public-key pinning throw.
public final class AFSecurityPolicy: @unchecked Sendable {
    // `@unchecked`: the settings are guarded by `lock`.
    private let lock = NSLock()
    private var _pinnedCertificates: Set<Data> = []
    private var _allowInvalidCertificates = false
    private var _validatesDomainName = true

    /// What is pinned.
    public let sslPinningMode: AFSSLPinningMode

    /// The pinned certificates, DER (AF's form) or PEM.
    public var pinnedCertificates: Set<Data> {
        get { lock.withLock { _pinnedCertificates } }
        set { lock.withLock { _pinnedCertificates = newValue } }
    }

    /// Whether invalid or self-signed certificates are accepted unverified (false by default).
    public var allowInvalidCertificates: Bool {
        get { lock.withLock { _allowInvalidCertificates } }
        set { lock.withLock { _allowInvalidCertificates = newValue } }
    }

    /// Whether the certificate must name the host (true by default).
    public var validatesDomainName: Bool {
        get { lock.withLock { _validatesDomainName } }
        set { lock.withLock { _validatesDomainName = newValue } }
    }

    /// A policy with `pinningMode` and no pinned certificates.
    /// - Parameter pinningMode: none, public key or certificate.
    public init(pinningMode: AFSSLPinningMode) {
        sslPinningMode = pinningMode
    }

    /// The default policy: no pinning, valid certificates only, host name checked.
    public class func `default`() -> AFSecurityPolicy { AFSecurityPolicy(pinningMode: .none) }

    /// A policy with `pinningMode` (AF's `policyWithPinningMode:`).
    /// - Parameter pinningMode: none, public key or certificate.
    /// - Returns: the policy.
    public class func policy(withPinningMode pinningMode: AFSSLPinningMode) -> AFSecurityPolicy {
        AFSecurityPolicy(pinningMode: pinningMode)
    }

    /// A policy with `pinningMode` and `pinnedCertificates` (AF's
    /// `policyWithPinningMode:withPinnedCertificates:`).
    /// - Parameters:
    ///   - pinningMode: none, public key or certificate.
    ///   - pinnedCertificates: the certificates (DER or PEM) to pin.
    /// - Returns: the policy.
    public class func policy(
        withPinningMode pinningMode: AFSSLPinningMode,
        withPinnedCertificates pinnedCertificates: Set<Data>
    ) -> AFSecurityPolicy {
        let policy = AFSecurityPolicy(pinningMode: pinningMode)
        policy.pinnedCertificates = pinnedCertificates
        return policy
    }

    /// The network options this policy means, for `CurlTransport` (what
    /// ``AFHTTPSessionManager/securityPolicy`` applies to every request):
    /// - none: the system's trust, ``allowInvalidCertificates`` and ``validatesDomainName`` as set;
    /// - certificate: the pinned certificates are the only trust anchors — a self-signed server
    ///   certificate, the CA, or a CA-issued leaf itself (libcurl accepts a chain that ends at
    ///   any trusted certificate), so the server's chain must contain a pinned certificate;
    /// - publicKey: every pinned certificate's public key becomes a pin: the server's leaf key
    ///   must match one (AF compared every key of the chain); the chain is still verified
    ///   against the system's roots unless ``allowInvalidCertificates``.
    /// - Throws: ``AFSecurityPolicyError`` for nothing pinned or a pinned file that is not a certificate.
    /// - Returns: the TLS settings of `NetworkOptions` that carry this policy.
    public func networkOptions() throws(AFSecurityPolicyError) -> NetworkOptions {
        let (certificates, allowInvalid, validatesDomain) = lock.withLock {
            (_pinnedCertificates, _allowInvalidCertificates, _validatesDomainName)
        }
        var options = NetworkOptions()
        options.validatesSecureCertificate = !allowInvalid
        options.validatesHostName = validatesDomain
        guard sslPinningMode != .none else { return options }
        guard !certificates.isEmpty else { throw .noPinnedCertificates }
        let ordered = certificates.sorted { $0.lexicographicallyPrecedes($1) }
        for (index, certificate) in ordered.enumerated() {
            guard let pin = NetworkPinning.publicKeyHash(ofCertificate: certificate) else { throw .unreadableCertificate(index: index) }
            if sslPinningMode == .certificate {
                options.trustedCertificates.append(certificate)
            } else {
                options.pinnedPublicKeyHashes.append(pin)
            }
        }
        return options
    }

    /// The trust-anchor pinning this policy means: none → the system store; certificate → the
    /// pinned certificates as the only trust anchors.
    /// - Throws: ``AFSecurityPolicyError`` for public-key mode, a pinned certificate that is not
    ///   self-signed, or certificate mode with nothing pinned.
    /// - Returns: the pinning, for `AsyncHTTPClientTransport.Configuration(pinning:)` or
    ///   `CurlTransport.Configuration(trust:)`.
    public func trustAnchorPinning() throws(AFSecurityPolicyError) -> TrustAnchorPinning {
        let (certificates, allowInvalid, validatesDomain) = lock.withLock {
            (_pinnedCertificates, _allowInvalidCertificates, _validatesDomainName)
        }
        switch sslPinningMode {
        case .none:
            return TrustAnchorPinning(
                certificates: [], validatesDomainName: validatesDomain,
                allowsInvalidCertificates: allowInvalid)
        case .publicKey:
            throw .publicKeyPinningUnsupported
        case .certificate:
            guard !certificates.isEmpty else { throw .noPinnedCertificates }
            // Sorted, so the order (and an error's index) does not depend on Set iteration.
            let ordered = certificates.sorted { $0.lexicographicallyPrecedes($1) }
            for (index, certificate) in ordered.enumerated() where !CertificateNames.isSelfIssued(certificate) {
                throw .leafPinningUnsupported(index: index)
            }
            return TrustAnchorPinning(
                certificates: ordered, validatesDomainName: validatesDomain,
                allowsInvalidCertificates: false)
        }
    }
}
