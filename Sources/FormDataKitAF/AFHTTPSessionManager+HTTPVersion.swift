import FormDataKit

/// The HTTP version of the manager's tasks (beyond AFNetworking, which left it to URLSession).
extension AFHTTPSessionManager {
    /// The HTTP version every task is sent with: `.automatic` by default (h2 over TLS when the
    /// server offers it); `.http1_1`, `.http2` (fails when the server does not choose h2) and
    /// `.http2PriorKnowledge` (h2c) need `CurlTransport`: with a transport that cannot choose,
    /// each task fails before sending, naming the setting. See FormDataKit's article "Choosing
    /// the HTTP version".
    public var httpVersion: HTTPVersion {
        get { settings.withLock { $0.httpVersion } }
        set { settings.withLock { $0.httpVersion = newValue } }
    }
}
