#if AsyncHTTPClient
import FormDataKit
import Foundation
import NIOSSL

/// Why an ``AsyncHTTPClientTransport`` could not be configured.
public enum AsyncHTTPClientTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Pinned certificate number `index` (from 0) is neither a PEM nor a DER certificate.
    case invalidCertificate(index: Int, reason: String)

    /// A sentence naming the certificate and what is wrong.
    public var description: String {
        switch self {
        case .invalidCertificate(let index, let reason):
            return "Pinned certificate \(index) is not a PEM or DER certificate: \(reason)"
        }
    }
}

extension TrustAnchorPinning {
    /// The NIOSSL client configuration this pinning means: the pinned certificates as the only
    /// trust roots (no additional roots), full verification, or no host-name check, or none.
    /// - Throws: ``AsyncHTTPClientTransportError/invalidCertificate(index:reason:)``.
    /// - Returns: the configuration, for ``AsyncHTTPClientTransport/Configuration/tlsConfiguration``.
    public func tlsConfiguration() throws(AsyncHTTPClientTransportError) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !certificates.isEmpty {
            var anchors: [NIOSSLCertificate] = []
            for (index, data) in certificates.enumerated() {
                do {
                    let bytes = [UInt8](data)
                    if data.starts(with: Data("-----BEGIN".utf8)) {
                        anchors += try NIOSSLCertificate.fromPEMBytes(bytes)
                    } else {
                        anchors.append(try NIOSSLCertificate(bytes: bytes, format: .der))
                    }
                } catch {
                    throw .invalidCertificate(index: index, reason: String(describing: error))
                }
            }
            tls.trustRoots = .certificates(anchors)
            tls.additionalTrustRoots = []
        }
        tls.certificateVerification =
            allowsInvalidCertificates
            ? .none
            : validatesDomainName ? .fullVerification : .noHostnameVerification
        return tls
    }
}
#endif
