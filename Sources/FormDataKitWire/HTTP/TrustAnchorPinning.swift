import Foundation

/// Which server certificates a transport trusts: trust-anchor pinning.
///
/// With ``certificates`` set, they are the *only* trust anchors: the server's chain must end in
/// one of them. That pins a self-signed server certificate, or a private CA ("only this CA").
/// It cannot pin a leaf issued by a CA, nor a public key: that needs a certificate-verification
/// callback, which AsyncHTTPClient does not expose (see Migration/AFNetworking.md). Applied by
/// `CurlTransport` (`CurlTransport.Configuration.trust`) and by the AsyncHTTPClient transport
/// (`FormDataKitAsyncHTTPClient`); URLSession on Linux offers no trust-root setting.
public struct TrustAnchorPinning: Sendable, Equatable {
    /// The pinned trust anchors, each a certificate in PEM or DER form. Empty: the system trust
    /// store (no pinning).
    public var certificates: [Data]
    /// Whether the certificate must name the host (true by default).
    public var validatesDomainName: Bool
    /// Whether any certificate is accepted, unverified (false by default; for testing only).
    public var allowsInvalidCertificates: Bool

    /// Trust `certificates` only (none: the system store), checking the host name unless
    /// `validatesDomainName` is false, and verifying nothing when `allowsInvalidCertificates`.
    /// - Parameters:
    ///   - certificates: the trusted certificates, PEM or DER; empty: the system's trust store.
    ///   - validatesDomainName: whether the server's certificate must name the host (true by default).
    ///   - allowsInvalidCertificates: whether to accept any certificate (false by default; tests only).
    public init(certificates: [Data], validatesDomainName: Bool = true, allowsInvalidCertificates: Bool = false) {
        self.certificates = certificates
        self.validatesDomainName = validatesDomainName
        self.allowsInvalidCertificates = allowsInvalidCertificates
    }
}
