import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ASIHTTPRequest's network properties: authentication, proxy, bandwidth, TLS, cookies. They
/// reach the transport as the request's ``NetworkOptions``; ``CurlTransport`` (the Linux
/// default) applies every one, the transports article (ChoosingATransport) says what the others do.
extension FormDataRequest {
    // MARK: Authentication

    /// The Windows domain for NTLM authentication (ASI's `domain`).
    public var domain: String? {
        get { sending.withLock { $0.settings.domain } }
        set { sending.withLock { $0.settings.domain = newValue } }
    }

    /// Whether Basic credentials (``username``/``password``) go with the first request, before
    /// the server asks (ASI's default: true). When the server then challenges with another scheme
    /// (Digest, NTLM), a transport that answers challenges (`CurlTransport`) answers it and
    /// sends the whole body again; ``authenticationScheme`` says which scheme was used. When
    /// false, the first request goes without credentials and the server's challenge decides.
    ///
    /// Over plain `http`, Basic credentials travel readable by anyone on the path — ASI sent them
    /// all the same, and so does FormDataKit (ported code expects it); the debug body log says so.
    public var shouldPresentCredentialsBeforeChallenge: Bool {
        get { sending.withLock { $0.settings.network.presentsCredentialsBeforeChallenge } }
        set { sending.withLock { $0.settings.network.presentsCredentialsBeforeChallenge = newValue } }
    }

    /// The scheme that authenticated the last send (`Basic`, `Digest`, `NTLM`), or nil.
    public var authenticationScheme: String? { sending.withLock { $0.results.authentication.scheme } }
    /// The realm of the last challenge the server sent, or nil.
    public var authenticationRealm: String? { sending.withLock { $0.results.authentication.realm } }
    /// How many times the last send's body went again to answer a challenge.
    public var authenticationRetryCount: Int { sending.withLock { $0.results.authentication.retryCount } }

    // MARK: Proxy

    /// The proxy's host; nil (the default): the environment's `http_proxy`/`https_proxy`/`no_proxy`.
    public var proxyHost: String? {
        get { sending.withLock { $0.settings.proxyHost } }
        set { sending.withLock { $0.settings.proxyHost = newValue } }
    }

    /// The proxy's port (default 0: 1080 for SOCKS5, 8080 otherwise, as ASI).
    public var proxyPort: Int {
        get { sending.withLock { $0.settings.proxyPort } }
        set { sending.withLock { $0.settings.proxyPort = newValue } }
    }

    /// The proxy's protocol (default HTTP).
    public var proxyType: NetworkOptions.ProxyType {
        get { sending.withLock { $0.settings.proxyType } }
        set { sending.withLock { $0.settings.proxyType = newValue } }
    }

    /// The proxy's user name.
    public var proxyUsername: String? {
        get { sending.withLock { $0.settings.proxyUsername } }
        set { sending.withLock { $0.settings.proxyUsername = newValue } }
    }

    /// The proxy's password.
    public var proxyPassword: String? {
        get { sending.withLock { $0.settings.proxyPassword } }
        set { sending.withLock { $0.settings.proxyPassword = newValue } }
    }

    /// The proxy's NTLM domain.
    public var proxyDomain: String? {
        get { sending.withLock { $0.settings.proxyDomain } }
        set { sending.withLock { $0.settings.proxyDomain = newValue } }
    }

    // MARK: Bandwidth

    /// The most body bytes per second any one request sends, process-wide (ASI's
    /// `+setMaxBandwidthPerSecond:`); 0 (the default): no limit. ASI shared one budget between
    /// all requests in flight; here each request is held to it on its own (`CurlTransport`,
    /// libcurl's `MAX_SEND_SPEED`).
    public static var maxBandwidthPerSecond: UInt64 {
        get { bandwidthStorage.current }
        set { bandwidthStorage.withLock { $0 = newValue } }
    }

    private static let bandwidthStorage = Locked<UInt64>(0)

    /// This request's limit in body bytes per second; 0 (the default): ``maxBandwidthPerSecond``.
    public var maxUploadBytesPerSecond: UInt64 {
        get { sending.withLock { $0.settings.network.maximumUploadBytesPerSecond } }
        set { sending.withLock { $0.settings.network.maximumUploadBytesPerSecond = newValue } }
    }

    // MARK: TLS

    /// Whether the server's certificate chain is checked (default true). False accepts any
    /// certificate (ASI's `validatesSecureCertificate`); the host name is still checked unless
    /// ``validatesHostName`` is false too.
    public var validatesSecureCertificate: Bool {
        get { sending.withLock { $0.settings.network.validatesSecureCertificate } }
        set { sending.withLock { $0.settings.network.validatesSecureCertificate = newValue } }
    }

    /// Whether the certificate must name the host (default true).
    public var validatesHostName: Bool {
        get { sending.withLock { $0.settings.network.validatesHostName } }
        set { sending.withLock { $0.settings.network.validatesHostName = newValue } }
    }

    /// Certificates (PEM or DER) trusted instead of the system's roots; empty: the system's.
    public var trustedCertificates: [Data] {
        get { sending.withLock { $0.settings.network.trustedCertificates } }
        set { sending.withLock { $0.settings.network.trustedCertificates = newValue } }
    }

    /// Public-key pins, `sha256//<base64 of the SHA-256 of the SubjectPublicKeyInfo>`; the
    /// connection fails (`FormDataError.connectionFailure(underlying:)` naming the pin) unless
    /// the server's key matches one. `NetworkPinning.publicKeyHash(ofCertificate:)` computes
    /// one from a certificate.
    public var pinnedPublicKeyHashes: [String] {
        get { sending.withLock { $0.settings.network.pinnedPublicKeyHashes } }
        set { sending.withLock { $0.settings.network.pinnedPublicKeyHashes = newValue } }
    }

    /// The client certificate presented when the server asks (ASI's `clientCertificateIdentity`).
    ///
    /// `CurlTransport` reads its files (and the key's) on its reader pool before each send, and
    /// gives them to libcurl from memory, so a handshake never reads a file on the transport's
    /// thread. A path that is not a readable regular file fails the send with
    /// `FormDataError.internalErrorWhileBuilding(underlying:)` naming it (a FIFO, a device, a
    /// socket: `FormDataError.notARegularFile(path:kind:)`; a missing file:
    /// `FormDataError.fileNotFound(path:)`).
    public var clientCertificate: NetworkOptions.ClientCertificate? {
        get { sending.withLock { $0.settings.network.clientCertificate } }
        set { sending.withLock { $0.settings.network.clientCertificate = newValue } }
    }

    // MARK: Cookies

    /// Whether the transport's cookie jar is used (ASI's `useCookiePersistence`, default true):
    /// cookies kept from earlier responses go with this request where RFC 6265 allows, and the
    /// cookies this response sets are kept. One jar per transport instance (`CurlTransport`).
    public var useCookiePersistence: Bool {
        get { sending.withLock { $0.settings.network.usesCookieJar } }
        set { sending.withLock { $0.settings.network.usesCookieJar = newValue } }
    }

    /// Cookies sent with this request in addition to the jar's (ASI's `requestCookies`); only
    /// their names and values are sent. Not sent after a redirect to another origin.
    public var requestCookies: [HTTPCookie] {
        get {
            sending.withLock { $0.settings.network.requestCookies }.compactMap {
                HTTPCookie(properties: [.name: $0.name, .value: $0.value, .path: "/", .domain: url.host ?? "localhost"])
            }
        }
        set { sending.withLock { $0.settings.network.requestCookies = newValue.map { RequestCookie(name: $0.name, value: $0.value) } } }
    }

    /// Names of ``requestHeaders`` that carry secrets (an API key in `X-Api-Key`, say): like
    /// `Authorization`, `Cookie` and `Proxy-Authorization`, they never go to another origin —
    /// not after a redirect, not to a resumable upload's URL on another host (FormDataKit's
    /// rule; ASIHTTPRequest sent every header wherever a redirect pointed). Case-insensitive;
    /// empty by default.
    public var sensitiveRequestHeaders: Set<String> {
        get { sending.withLock { $0.settings.network.sensitiveHeaderNames } }
        set { sending.withLock { $0.settings.network.sensitiveHeaderNames = newValue } }
    }

    /// Adds a cookie to ``requestCookies``.
    /// - Parameters:
    ///   - name: the cookie's name.
    ///   - value: the cookie's value.
    public func addRequestCookie(name: String, value: String) {
        sending.withLock { $0.settings.network.requestCookies.append(RequestCookie(name: name, value: value)) }
    }

    /// The cookies the last response set (its `Set-Cookie` headers), as ASI's `responseCookies`.
    public var responseCookies: [HTTPCookie] {
        guard let headers = responseHeaders else { return [] }
        let target = responseURL ?? url
        return HTTPCookie.cookies(withResponseHeaderFields: headers, for: target)
    }
}
