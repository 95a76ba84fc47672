import Foundation

/// ASIHTTPRequest's `copy` and `encodeURL:`.
extension FormDataRequest {
    /// A new request with this one's URL (``originalURL`` when a send was redirected), form
    /// (values and files, which are read again when the copy builds its body), headers the caller
    /// set, settings, transport, delegate and blocks — what ported retry code expects of
    /// ASIHTTPRequest's `copy`. Nothing of a send is copied: the copy builds its own body (never
    /// one with a stale `Content-Length`), and starts with no response or error.
    public func copy() -> FormDataRequest {
        var form = state.withLock { $0 }
        form.invalidateBody()
        form.lastSentPostLength = 0
        if let original = form.originalURL { form.url = original }
        form.originalURL = nil
        let copied = FormDataRequest(url: form.url)
        copied.state.withLock { $0 = form }
        let settings = sending.withLock { $0 }
        copied.sending.withLock { $0.takeSettings(of: settings) }
        return copied
    }

    /// The URL before the last send's redirects (ASIHTTPRequest's `originalURL`); nil when no
    /// send was redirected. After a redirected send, ``url`` is where it ended (as ASI set it).
    public var originalURL: URL? { state.withLock { $0.originalURL } }

    /// After a send that ended at `final`: ``url`` becomes it, ``originalURL`` keeps the first.
    func followRedirect(to final: URL) {
        state.withLock { state in
            guard final != state.url else { return }
            if state.originalURL == nil { state.originalURL = state.url }
            state.url = final
        }
    }

    /// `string` escaped as values are in a URL-encoded body (ASIHTTPRequest's `encodeURL:`): every
    /// byte but `A–Z a–z 0–9 - . _`, in ``stringEncoding``, becomes `%XX`; nil when a character
    /// cannot be represented in that encoding.
    public func encodeURL(_ string: String) -> String? {
        try? URLFormEncoding.escape(string, encoding: stringEncoding)
    }
}

extension SendingState {
    /// Takes `other`'s settings, transport, delegate and callbacks — not its send in flight or
    /// its results (this state's progress object stays its own).
    mutating func takeSettings(of other: SendingState) {
        timeOutSeconds = other.timeOutSeconds
        numberOfTimesToRetryOnTimeout = other.numberOfTimesToRetryOnTimeout
        username = other.username
        password = other.password
        network = other.network
        domain = other.domain
        proxyHost = other.proxyHost
        proxyPort = other.proxyPort
        proxyType = other.proxyType
        proxyUsername = other.proxyUsername
        proxyPassword = other.proxyPassword
        proxyDomain = other.proxyDomain
        allowCompressedResponse = other.allowCompressedResponse
        userAgentString = other.userAgentString
        maximumDecompressedResponseSize = other.maximumDecompressedResponseSize
        maximumResponseSize = other.maximumResponseSize
        transport = other.transport
        delegate = other.delegate
        callbackQueue = other.callbackQueue
        startedBlock = other.startedBlock
        completionBlock = other.completionBlock
        failedBlock = other.failedBlock
        bytesSentBlock = other.bytesSentBlock
    }
}
