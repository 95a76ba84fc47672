import ArgumentParser
import FormDataKit
import Foundation

/// `formdata post`'s network flags, named as curl names them; each sets the matching
/// ``FormDataRequest`` property (see the NetworkFeatures article).
struct NetworkFlags: ParsableArguments {
    @Option(
        name: .customLong("proxy"),
        help: "Send through a proxy: http://host:port or socks5://host:port (default: the http_proxy/https_proxy/no_proxy environment).")
    var proxy: String?

    @Option(name: .customLong("proxy-user"), help: "The proxy's credentials, user:password.")
    var proxyUser: String?

    @Option(name: .customLong("limit-rate"), help: "Send at most this many body bytes per second (suffixes K, M, G: powers of 1024).")
    var limitRate: String?

    @Option(name: .customLong("pinnedpubkey"), help: "Public-key pins, sha256//BASE64[;sha256//BASE64…]: the server's key must match one.")
    var pinnedPublicKey: String?

    @Option(name: .customLong("cacert"), help: "A PEM file of certificates to trust instead of the system's.")
    var caCertificate: String?

    @Option(name: .customLong("cert"), help: "A client certificate: PEM[:password] (or a .p12/.pfx file).")
    var certificate: String?

    @Option(name: .customLong("key"), help: "The client certificate's private key (PEM), when not in --cert's file.")
    var key: String?

    @Flag(
        name: .customLong("insecure"),
        help: "Accept any server certificate (validatesSecureCertificate = false; the host name is still checked).")
    var insecure = false

    @Option(
        name: .customLong("cookie-jar"),
        help: "Read cookies from this file (when it exists) and write them back after the send (curl transport).")
    var cookieJar: String?

    @Flag(
        name: .customLong("no-preemptive-auth"),
        help: "Send --user's credentials only when the server asks (shouldPresentCredentialsBeforeChallenge = false).")
    var noPreemptiveAuth = false

    @Flag(name: .customLong("http1.1"), help: "Send with HTTP/1.1 only (httpVersion = .http1_1).")
    var http1_1 = false

    @Flag(name: .customLong("http2"), help: "Send with HTTP/2 over TLS; fail if the server does not choose it (httpVersion = .http2).")
    var http2 = false

    @Flag(
        name: .customLong("http2-prior-knowledge"),
        help: "Send with HTTP/2 over cleartext without an upgrade, h2c (httpVersion = .http2PriorKnowledge).")
    var http2PriorKnowledge = false

    /// The version the flags ask for; nil without one.
    /// - Throws: `ValidationError` when more than one is given.
    func httpVersion() throws -> HTTPVersion? {
        let chosen = [(http1_1, HTTPVersion.http1_1), (http2, .http2), (http2PriorKnowledge, .http2PriorKnowledge)].filter(\.0)
        guard chosen.count <= 1 else { throw ValidationError("--http1.1, --http2 and --http2-prior-knowledge exclude each other") }
        return chosen.first?.1
    }

    /// Sets the request's network properties from the flags.
    /// - Throws: `ValidationError` naming the flag for a value it cannot use.
    func apply(to request: FormDataRequest) throws {
        if let proxy {
            let (host, port, type) = try Self.proxy(proxy)
            request.proxyHost = host
            request.proxyPort = port
            request.proxyType = type
        }
        if let proxyUser {
            let (name, password) = try Post.credentials(proxyUser, flag: "--proxy-user")
            request.proxyUsername = name
            request.proxyPassword = password
        }
        if let limitRate { request.maxUploadBytesPerSecond = try Self.bytes(limitRate) }
        if let pinnedPublicKey {
            let pins = pinnedPublicKey.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !pins.isEmpty, pins.allSatisfy({ $0.hasPrefix("sha256//") && $0.count > 8 }) else {
                throw ValidationError("--pinnedpubkey wants sha256//BASE64[;sha256//BASE64…] (got \(pinnedPublicKey.debugDescription))")
            }
            request.pinnedPublicKeyHashes = pins
        }
        if let caCertificate {
            do {
                request.trustedCertificates = [try Data(contentsOf: URL(fileURLWithPath: caCertificate))]
            } catch {
                throw ValidationError("--cacert \(caCertificate): \(error.localizedDescription)")
            }
        }
        if let certificate {
            request.clientCertificate = Self.clientCertificate(certificate, key: key)
        } else if key != nil {
            throw ValidationError("--key needs --cert")
        }
        if insecure { request.validatesSecureCertificate = false }
        if noPreemptiveAuth { request.shouldPresentCredentialsBeforeChallenge = false }
        if let version = try httpVersion() { request.httpVersion = version }
    }

    /// `--proxy`'s URL: host, port (default 1080 for SOCKS, 8080 otherwise), type.
    static func proxy(_ text: String) throws -> (String, Int, NetworkOptions.ProxyType) {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: withScheme), let host = url.host, !host.isEmpty else {
            throw ValidationError("--proxy wants http://host:port or socks5://host:port (got \(text.debugDescription))")
        }
        let type: NetworkOptions.ProxyType
        switch url.scheme?.lowercased() {
        case "http": type = .http
        case "socks5", "socks5h": type = .socks5
        default: throw ValidationError("--proxy: unsupported scheme \(url.scheme ?? "") (http, socks5)")
        }
        return (host, url.port ?? (type == .socks5 ? 1080 : 8080), type)
    }

    /// `--limit-rate`'s byte count: digits with an optional K, M or G (powers of 1024), as curl.
    static func bytes(_ text: String) throws -> UInt64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let multipliers: [Character: UInt64] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        var digits = Substring(trimmed)
        var multiplier: UInt64 = 1
        if let last = trimmed.last?.lowercased().first, let factor = multipliers[last] {
            multiplier = factor
            digits = digits.dropLast()
        }
        guard let value = UInt64(digits), value > 0, value <= UInt64.max / multiplier else {
            throw ValidationError("--limit-rate wants a positive byte count such as 1048576 or 1M (got \(text.debugDescription))")
        }
        return value * multiplier
    }

    /// `--cert`'s `path[:password]` (the format from the extension: .p12/.pfx is PKCS#12).
    static func clientCertificate(_ text: String, key: String?) -> NetworkOptions.ClientCertificate {
        var path = text
        var password: String?
        if let colon = text.lastIndex(of: ":"), !FileManager.default.fileExists(atPath: text) {
            path = String(text[..<colon])
            password = String(text[text.index(after: colon)...])
        }
        let lower = path.lowercased()
        let format: NetworkOptions.ClientCertificate.Format = lower.hasSuffix(".p12") || lower.hasSuffix(".pfx") ? .pkcs12 : .pem
        return .init(path: path, format: format, keyPath: key, password: password)
    }
}
