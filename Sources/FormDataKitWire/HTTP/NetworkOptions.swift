import Foundation

/// The network settings of one request that its transport applies: ASIHTTPRequest's
/// authentication, proxy, bandwidth, TLS and cookie properties. `CurlTransport` applies all of
/// them; the transports article (ChoosingATransport) says what `URLSessionTransport` and AsyncHTTPClient do.
public struct NetworkOptions: Sendable, Equatable {
    /// A user name and password, with the Windows domain for NTLM.
    public struct Credentials: Sendable, Equatable {
        /// The user name.
        public var user: String
        /// The password.
        public var password: String
        /// The NTLM domain (ASI's `domain`); sent as `DOMAIN\user`.
        public var domain: String?

        /// Credentials for `user`.
        /// - Parameters:
        ///   - user: the user name.
        ///   - password: the password.
        ///   - domain: the NTLM domain, nil for none.
        public init(user: String, password: String, domain: String? = nil) {
            self.user = user
            self.password = password
            self.domain = domain
        }

        /// The user name as libcurl takes it: `DOMAIN\user` when there is a domain.
        package var qualifiedUser: String {
            guard let domain, !domain.isEmpty else { return user }
            return "\(domain)\\\(user)"
        }
    }

    /// The protocol spoken to a proxy.
    public enum ProxyType: String, Sendable, Equatable, CaseIterable {
        /// An HTTP proxy (`CONNECT` for https URLs).
        case http
        /// A SOCKS5 proxy; host names are resolved by the proxy.
        case socks5
    }

    /// A proxy to send through.
    public struct Proxy: Sendable, Equatable {
        /// The proxy's host name or address.
        public var host: String
        /// The proxy's port.
        public var port: Int
        /// HTTP or SOCKS5.
        public var type: ProxyType
        /// Credentials for the proxy (Basic, or Digest/NTLM when the proxy asks for them).
        public var credentials: Credentials?

        /// A proxy at `host`:`port`.
        /// - Parameters:
        ///   - host: the proxy's host name or address.
        ///   - port: the proxy's port.
        ///   - type: HTTP (the default) or SOCKS5.
        ///   - credentials: for a proxy that asks for them; nil for none.
        public init(host: String, port: Int, type: ProxyType = .http, credentials: Credentials? = nil) {
            self.host = host
            self.port = port
            self.type = type
            self.credentials = credentials
        }

        /// `http://host:port` or `socks5h://host:port`.
        package var url: String {
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return "\(type == .socks5 ? "socks5h" : "http")://\(bracketed):\(port)"
        }
    }

    /// A client certificate (ASI's `clientCertificateIdentity`).
    public struct ClientCertificate: Sendable, Equatable {
        /// The file format.
        public enum Format: String, Sendable, Equatable {
            /// PEM: the certificate, with the key in the same file or in ``keyPath``.
            case pem = "PEM"
            /// PKCS#12 (`.p12`, `.pfx`): certificate and key together, usually with a password.
            case pkcs12 = "P12"
        }

        /// The certificate file.
        public var path: String
        /// PEM or PKCS#12.
        public var format: Format
        /// The private key file, when it is not in ``path`` (PEM only).
        public var keyPath: String?
        /// The password of the key or the PKCS#12 file.
        public var password: String?

        /// A client certificate read from `path`.
        /// - Parameters:
        ///   - path: the certificate file.
        ///   - format: PEM (the default) or PKCS#12.
        ///   - keyPath: the private key's file when it is not in `path` (PEM only).
        ///   - password: the key's or the PKCS#12 file's password, nil for none.
        public init(path: String, format: Format = .pem, keyPath: String? = nil, password: String? = nil) {
            self.path = path
            self.format = format
            self.keyPath = keyPath
            self.password = password
        }
    }

    /// The server's credentials (ASI's `username`/`password`/`domain`).
    public var credentials: Credentials?
    /// Whether Basic credentials go with the first request (ASI's
    /// `shouldPresentCredentialsBeforeChallenge`, default true). When the server answers 401 with
    /// another scheme (Digest, NTLM), the request answers it and sends the whole body again.
    /// When false, the first request goes without credentials and the server's challenge decides
    /// the scheme.
    public var presentsCredentialsBeforeChallenge = true
    /// The proxy; nil: the environment's `http_proxy`, `https_proxy` and `no_proxy` (as curl).
    public var proxy: Proxy?
    /// The most body bytes per second to send; 0: no limit.
    public var maximumUploadBytesPerSecond: UInt64 = 0
    /// Whether the server's certificate chain is checked (default true). Host names are checked
    /// whatever this says, unless ``validatesHostName`` is false.
    public var validatesSecureCertificate = true
    /// Whether the certificate must name the host (default true).
    public var validatesHostName = true
    /// Certificates (PEM or DER) to trust instead of the system's roots; empty: the system's.
    public var trustedCertificates: [Data] = []
    /// SHA-256 pins of the server's public key (SubjectPublicKeyInfo), base64, e.g.
    /// `sha256//AbC…=`; the connection fails unless the server's key matches one. Empty: no pinning.
    public var pinnedPublicKeyHashes: [String] = []
    /// The client certificate to present when the server asks for one.
    public var clientCertificate: ClientCertificate?
    /// Whether the transport's cookie jar is used: cookies it holds are sent, cookies the
    /// response sets are kept (ASI's `useCookiePersistence`, default true).
    public var usesCookieJar = true
    /// Cookies sent with this request in addition to the jar's (ASI's `requestCookies`).
    public var requestCookies: [RequestCookie] = []
    /// Names of the request's own fields that carry secrets (an API key in `X-Api-Key`, say):
    /// like `Authorization`, `Cookie` and `Proxy-Authorization`, they never go to another
    /// origin — not after a redirect, not anywhere a server's answer points (``OriginRule``).
    /// Compared without regard to case. Empty by default.
    public var sensitiveHeaderNames: Set<String> = []
    /// The authentication schemes to answer a challenge with (`Digest`, `NTLM`, `Negotiate`,
    /// `Basic`), set by the send driver when it sends again to answer a 401 after pre-emptive
    /// Basic. Empty (the default): Basic pre-emptively when ``presentsCredentialsBeforeChallenge``,
    /// else whichever scheme the server asks for.
    public var challengeSchemes: [String] = []

    /// Whether an upload whose connection is lost mid-body is resumed (Resumable Uploads for
    /// HTTP, see ``TransportCapabilities/resumableUploads``): the request announces it, and after
    /// a loss the rest of the body is sent from the server's offset. Off by default.
    public var resumesInterruptedUploads = false
    /// How many times one send resumes its upload (offset requests, after a loss or an offset
    /// mismatch) before it fails; 3 by default.
    public var maximumUploadResumptions = 3

    /// The HTTP version to send with (``HTTPVersion/automatic`` by default: h2 over TLS when the
    /// server offers it). Any other needs ``TransportCapabilities/httpVersions``.
    public var httpVersion = HTTPVersion.automatic

    /// What a transport must be able to do to apply these options: each setting that only some
    /// transports apply, by the capability it needs and the property's name, the first one
    /// first. Empty when every transport applies them.
    public var requiredCapabilities: [(capability: TransportCapabilities, option: String)] {
        var needed: [(capability: TransportCapabilities, option: String)] = []
        if proxy != nil { needed.append((.proxies, "proxyHost")) }
        if maximumUploadBytesPerSecond > 0 { needed.append((.bandwidthLimit, "maxUploadBytesPerSecond (or maxBandwidthPerSecond)")) }
        if !pinnedPublicKeyHashes.isEmpty { needed.append((.publicKeyPinning, "pinnedPublicKeyHashes")) }
        if clientCertificate != nil { needed.append((.clientCertificates, "clientCertificate")) }
        if !trustedCertificates.isEmpty { needed.append((.customTrust, "trustedCertificates")) }
        if !validatesSecureCertificate { needed.append((.customTrust, "validatesSecureCertificate = false")) }
        if !validatesHostName { needed.append((.customTrust, "validatesHostName = false")) }
        if resumesInterruptedUploads { needed.append((.resumableUploads, "shouldResumeInterruptedUploads")) }
        if httpVersion != .automatic { needed.append((.httpVersions, "httpVersion = .\(httpVersion)")) }
        return needed
    }

    /// Defaults: pre-emptive credentials, the environment's proxy, no bandwidth limit, the
    /// system's trust, the cookie jar on.
    public init() {}
}

/// A cookie to send: a name and a value.
public struct RequestCookie: Sendable, Equatable {
    /// The cookie's name.
    public var name: String
    /// The cookie's value.
    public var value: String

    /// The cookie `name=value`.
    /// - Parameters:
    ///   - name: the cookie's name.
    ///   - value: the cookie's value, sent as it is.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// What a transport reports about authentication after a send.
public struct AuthenticationOutcome: Sendable, Equatable {
    /// The scheme that answered the server last: `Basic`, `Digest`, `NTLM`, `Negotiate`; nil when
    /// no credentials were sent.
    public var scheme: String?
    /// The realm of the server's last challenge, if it sent one.
    public var realm: String?
    /// How many times the body was sent again to answer a challenge.
    public var retryCount: Int

    /// An outcome with the given parts.
    /// - Parameters:
    ///   - scheme: the scheme that was answered (`Basic`, `Digest`, `NTLM`), nil when none was.
    ///   - realm: the realm the server named, nil when none.
    ///   - retryCount: how many times the request was sent again to answer a challenge.
    public init(scheme: String? = nil, realm: String? = nil, retryCount: Int = 0) {
        self.scheme = scheme
        self.realm = realm
        self.retryCount = retryCount
    }

    /// The `realm` parameter of a `WWW-Authenticate` or `Proxy-Authenticate` value.
    package static func realm(in challenge: String) -> String? {
        guard let range = challenge.range(of: "realm=", options: .caseInsensitive) else { return nil }
        var rest = challenge[range.upperBound...]
        if rest.hasPrefix("\"") {
            rest = rest.dropFirst()
            return String(rest.prefix { $0 != "\"" })
        }
        return String(rest.prefix { $0 != "," && $0 != " " })
    }

    /// The scheme of a challenge: its first word (`Digest realm=…` → `Digest`).
    package static func scheme(of challenge: String) -> String {
        String(challenge.trimmingCharacters(in: .whitespaces).prefix { $0 != " " && $0 != "," })
    }
}
