import Foundation

/// The HTTP version: asked for, and what the last response came in.
extension FormDataRequest {
    /// The HTTP version to send with (curl's `--http1.1`, `--http2`, `--http2-prior-knowledge`):
    /// `HTTPVersion.automatic` by default (h2 over TLS when the server offers it, HTTP/1.1
    /// otherwise). Another value needs a transport that applies it (`CurlTransport`); one that
    /// cannot fails the send before anything goes out, naming the setting. See the article
    /// "Choosing the HTTP version".
    public var httpVersion: HTTPVersion {
        get { sending.withLock { $0.settings.network.httpVersion } }
        set { sending.withLock { $0.settings.network.httpVersion = newValue } }
    }

    /// The HTTP version the last response came in (`HTTP/2` over a multiplexed connection), nil
    /// before a response or when the transport does not say.
    public var responseHTTPVersion: ResponseHTTPVersion? { sending.withLock { $0.results.responseHTTPVersion } }
}
