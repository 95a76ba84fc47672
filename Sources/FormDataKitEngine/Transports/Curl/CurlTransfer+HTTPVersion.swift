import FormDataKitWire
import CCurl

/// The HTTP version of a transfer: what was negotiated, and the refusal of a strict
/// ``HTTPVersion/http2`` on a connection that did not choose `h2`.
extension CurlTransfer {
    /// Whether the transfer must see its connection before the request goes out (the
    /// pre-request callback): for ``HTTPVersion/http2`` (and ``HTTPVersion/http2PriorKnowledge``
    /// over https), which refuse a connection without h2.
    var checksNegotiatedVersion: Bool {
        switch request.network.httpVersion {
        case .http2: return true
        case .http2PriorKnowledge: return request.url.scheme?.lowercased() == "https"
        case .automatic, .http1_1: return false
        }
    }

    /// Whether the connection the request is about to go on may carry it: false for
    /// ``HTTPVersion/http2`` on a connection whose TLS handshake did not choose `h2` (or no TLS);
    /// the transfer then ends before anything is sent.
    func connectionCarriesVersion() -> Bool {
        guard checksNegotiatedVersion, let easy else { return true }
        // -1: a TLS library that cannot say; the response's version still tells.
        if ccurl_easy_tls_alpn_is_h2(easy) != 0 { return true }
        refusedVersion = true
        return false
    }

    /// The version the response came in (`CURLINFO_HTTP_VERSION`), nil when libcurl does not say.
    var negotiatedVersion: ResponseHTTPVersion? {
        guard let easy else { return nil }
        var value = 0
        guard ccurl_easy_getinfo_long(easy, CurlInfo.httpVersion, &value) == CurlCode.ok else { return nil }
        return CurlHTTPVersion.response(value)
    }
}
