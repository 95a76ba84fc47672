import Foundation

/// The HTTP version a request asks for (``NetworkOptions/httpVersion``), with curl's meanings.
public enum HTTPVersion: String, Sendable, Equatable, CaseIterable {
    /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise (the default).
    case automatic
    /// HTTP/1.1 only, over TLS or cleartext (curl's `--http1.1`).
    case http1_1
    /// HTTP/2 over TLS; a server that does not choose `h2` in the TLS handshake fails the send with
    /// ``FormDataError/httpVersionNotNegotiated(url:requested:)`` before the request goes out
    /// (over cleartext too: use ``http2PriorKnowledge`` for h2c). curl's `--http2`, but strict.
    case http2
    /// HTTP/2 over cleartext without an upgrade (h2c, curl's `--http2-prior-knowledge`); over TLS,
    /// as ``http2``. A cleartext server without h2c fails the send with a connection failure.
    /// With `CurlTransport` each h2c send has a connection of its own (libcurl 7.88 cannot
    /// reuse one).
    case http2PriorKnowledge

    /// Whether requests of this version may share a connection (HTTP/2 streams) to `url`.
    /// - Parameter url: where the request goes.
    /// - Returns: true for ``http2``, and for ``automatic`` and ``http2PriorKnowledge`` over https.
    package func multiplexes(to url: URL) -> Bool {
        switch self {
        case .automatic, .http2PriorKnowledge: return url.scheme?.lowercased() == "https"
        case .http1_1: return false
        case .http2: return true
        }
    }
}

/// The HTTP version a response came in (``FormDataResponse/httpVersion``).
public enum ResponseHTTPVersion: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// HTTP/1.0.
    case http1_0 = "HTTP/1.0"
    /// HTTP/1.1.
    case http1_1 = "HTTP/1.1"
    /// HTTP/2.
    case http2 = "HTTP/2"
    /// HTTP/3.
    case http3 = "HTTP/3"

    /// `HTTP/1.1`, `HTTP/2`…
    public var description: String { rawValue }
}
