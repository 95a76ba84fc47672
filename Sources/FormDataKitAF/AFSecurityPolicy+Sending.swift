import FormDataKit
import Foundation

extension AFSecurityPolicy {
    /// Puts this policy's checks into `request` for `transport` (curl applies them); with another
    /// transport, a policy other than the default is an error rather than a request checked
    /// differently. Both AF façades (session manager, AF 2 operations) send through this.
    func apply(to request: inout TransportRequest, sentBy transport: any FormDataTransport) throws {
        let options = try networkOptions()
        let isDefault =
            options.trustedCertificates.isEmpty && options.pinnedPublicKeyHashes.isEmpty
            && options.validatesSecureCertificate && options.validatesHostName
        if isDefault { return }
        guard transport.answersAuthenticationChallenges else {
            throw FormDataError.unableToCreateRequest(
                underlying: UnderlyingError(
                    domain: "FormDataKitAF", code: 0,
                    message:
                        "securityPolicy needs CurlTransport; with \(type(of: transport)), configure the transport itself (AFSecurityPolicy.trustAnchorPinning())"
                ))
        }
        request.network.trustedCertificates = options.trustedCertificates
        request.network.pinnedPublicKeyHashes = options.pinnedPublicKeyHashes
        request.network.validatesSecureCertificate = options.validatesSecureCertificate
        request.network.validatesHostName = options.validatesHostName
    }
}
