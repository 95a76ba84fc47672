import Foundation

/// What a transport can apply: one set it declares, checked against a request's
/// ``NetworkOptions/requiredCapabilities`` before anything is sent.
public struct TransportCapabilities: OptionSet, Sendable, Hashable {
    /// The set's bits.
    public let rawValue: UInt16
    /// Makes a set from its raw bits.
    /// - Parameter rawValue: the bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Answers authentication challenges (Basic, Digest, NTLM) with ``NetworkOptions/credentials``.
    public static let challengeAuthentication = TransportCapabilities(rawValue: 1 << 0)
    /// Sends through ``NetworkOptions/proxy``.
    public static let proxies = TransportCapabilities(rawValue: 1 << 1)
    /// Limits the upload rate to ``NetworkOptions/maximumUploadBytesPerSecond``.
    public static let bandwidthLimit = TransportCapabilities(rawValue: 1 << 2)
    /// Checks ``NetworkOptions/pinnedPublicKeyHashes``.
    public static let publicKeyPinning = TransportCapabilities(rawValue: 1 << 3)
    /// Presents ``NetworkOptions/clientCertificate``.
    public static let clientCertificates = TransportCapabilities(rawValue: 1 << 4)
    /// Applies ``NetworkOptions/trustedCertificates``, ``NetworkOptions/validatesSecureCertificate``
    /// and ``NetworkOptions/validatesHostName`` per request.
    public static let customTrust = TransportCapabilities(rawValue: 1 << 5)
    /// Keeps a cookie jar (``NetworkOptions/usesCookieJar``) and sends
    /// ``NetworkOptions/requestCookies`` itself; without it they go as a `Cookie` header.
    public static let cookies = TransportCapabilities(rawValue: 1 << 6)
    /// Undoes a response's content encoding (gzip) itself: body bytes arrive decoded. Without
    /// it the send driver inflates a gzip body.
    public static let decodesContentEncoding = TransportCapabilities(rawValue: 1 << 7)
    /// Resumes an upload whose connection was lost (Resumable Uploads for HTTP:
    /// ``NetworkOptions/resumesInterruptedUploads``). The send driver makes the offset and
    /// append exchanges; the transport needs to send `OPTIONS`, `HEAD` and `PATCH` and take the
    /// rest of a body from an offset as ``TransportRequest/Body/source(_:)``. With
    /// ``informationalResponses`` the upload is announced with its content and the server's `104`
    /// gives its URL; without, the driver asks the server first (`OPTIONS`) and creates the
    /// upload before sending its content (one more round trip before the body).
    public static let resumableUploads = TransportCapabilities(rawValue: 1 << 8)
    /// Reports interim (`1xx`) responses other than `100 Continue`
    /// (``TransportObserver/transportDidReceiveInformationalResponse(_:)``), such as the `104`
    /// of a resumable upload.
    public static let informationalResponses = TransportCapabilities(rawValue: 1 << 9)
    /// Sends with the HTTP version a request asks for (``NetworkOptions/httpVersion`` other than
    /// ``HTTPVersion/automatic``) and reports the version of each response.
    public static let httpVersions = TransportCapabilities(rawValue: 1 << 10)
}
