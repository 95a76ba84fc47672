import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

extension CurlTransfer {
    /// Credentials, proxy, bandwidth, TLS and cookies from ``TransportRequest/network``.
    func applyNetworkOptions(
        configuration: CurlTransport.Configuration,
        set: (Int32, Int) -> Void, setString: (Int32, String) -> Void,
        setOff: (Int32, Int64) -> Void, setPointer: (Int32, UnsafeRawPointer?) -> Void
    ) {
        let network = request.network
        set(CurlOption.httpVersion, CurlHTTPVersion.option(for: network.httpVersion))
        if network.httpVersion == .http2PriorKnowledge && request.url.scheme?.lowercased() != "https" {
            // libcurl 7.88 fails every later request on an h2c connection it reuses ("Error in
            // the HTTP2 framing layer", measured with curl's own --http2-prior-knowledge too):
            // h2c sends go one per connection.
            set(CurlOption.freshConnect, 1)
            set(CurlOption.forbidReuse, 1)
        } else if network.httpVersion.multiplexes(to: request.url) {
            // Concurrent sends to one origin wait for its h2 connection rather than open their own.
            set(CurlOption.pipeWait, 1)
        }
        if let credentials = network.credentials, authSchemes != 0 {
            setString(CurlOption.username, credentials.qualifiedUser)
            setString(CurlOption.password, credentials.password)
            set(CurlOption.httpAuth, authSchemes)
        }
        if let proxy = network.proxy {
            setString(CurlOption.proxy, proxy.url)
            set(CurlOption.proxyType, proxy.type == .socks5 ? CurlAuth.proxySOCKS5Hostname : CurlAuth.proxyHTTP)
            if let credentials = proxy.credentials {
                setString(CurlOption.proxyUsername, credentials.qualifiedUser)
                setString(CurlOption.proxyPassword, credentials.password)
                set(CurlOption.proxyAuth, network.presentsCredentialsBeforeChallenge ? CurlAuth.basic : CurlAuth.any)
            }
        }
        // Without a proxy of its own, libcurl reads http_proxy / https_proxy / no_proxy itself.
        if network.maximumUploadBytesPerSecond > 0 {
            setOff(CurlOption.maxSendSpeedLarge, Int64(clamping: network.maximumUploadBytesPerSecond))
        }
        if !network.trustedCertificates.isEmpty {
            let bundle = Data(network.trustedCertificates.map(Self.pem(of:)).joined(separator: "\n").utf8)
            bundle.withUnsafeBytes { raw in
                if let easy { _ = ccurl_easy_setopt_blob(easy, CurlOption.caInfoBlob, raw.baseAddress, raw.count) }
            }
        }
        if !network.validatesSecureCertificate { set(CurlOption.sslVerifyPeer, 0) }
        if !network.validatesHostName { set(CurlOption.sslVerifyHost, 0) }
        if !network.pinnedPublicKeyHashes.isEmpty {
            setString(CurlOption.pinnedPublicKey, network.pinnedPublicKeyHashes.joined(separator: ";"))
        }
        if let certificate = network.clientCertificate, let files = send.clientCertificateFiles, let easy {
            // From memory (read on the reader pool): libcurl would read the files at each handshake.
            files.certificate.withUnsafeBytes { _ = ccurl_easy_setopt_blob(easy, CurlOption.sslCertBlob, $0.baseAddress, $0.count) }
            setString(CurlOption.sslCertType, certificate.format.rawValue)
            if let key = files.key {
                key.withUnsafeBytes { _ = ccurl_easy_setopt_blob(easy, CurlOption.sslKeyBlob, $0.baseAddress, $0.count) }
            }
            if let password = certificate.password { setString(CurlOption.keyPassword, password) }
        }
        if network.usesCookieJar, let jar = send.transport.cookieJar, let handle = jar.shareHandle {
            cookieJar = jar
            setPointer(CurlOption.share, handle)
            // Turns the cookie engine on for this handle. A jar file is read into the jar once,
            // on the reader pool before the first send that uses it (``CurlTransport``), and
            // written there when a send's responses changed it (``exchangeEnded()``).
            setString(CurlOption.cookieFile, "")
            cookieJarFile = configuration.cookieJarFile
        }
        if !network.requestCookies.isEmpty {
            setString(CurlOption.cookie, network.requestCookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; "))
        }
    }

    /// A certificate as PEM text (DER is wrapped; PEM is kept as it is).
    static func pem(of certificate: Data) -> String {
        let text = String(decoding: certificate, as: UTF8.self)
        if text.contains("-----BEGIN") { return text }
        let base64 = certificate.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }
}
