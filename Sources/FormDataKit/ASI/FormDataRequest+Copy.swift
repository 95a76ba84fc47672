import Foundation

/// ASIHTTPRequest's `copy` and `encodeURL:`.
extension FormDataRequest {
    /// A new request with this one's URL (``originalURL`` when a send was redirected), form
    /// (values and files, which are read again when the copy builds its body), headers the caller
    /// set, settings, transport, delegate and blocks — what ported retry code expects of
    /// ASIHTTPRequest's `copy`. Nothing of a send is copied: the copy builds its own body (never
    /// one with a stale `Content-Length`), and starts with no response or error.
    /// - Returns: the new request, not sent, with no body built.
    public func copy() -> FormDataRequest {
        var form = state.withLock { $0 }
        form.invalidateBody()
        form.lastSentPostLength = 0
        if let original = form.originalURL { form.url = original }
        form.originalURL = nil
        let copied = FormDataRequest(url: form.url)
        copied.state.withLock { $0 = form }
        // The settings and the callbacks; not the send in flight or its results (the copy's
        // progress object stays its own).
        let (settings, callbacks) = sending.withLock { ($0.settings, $0.callbacks) }
        copied.sending.withLock {
            $0.settings = settings
            $0.callbacks = callbacks
        }
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
    /// - Parameter string: the text to escape.
    /// - Returns: the escaped text, or nil when ``stringEncoding`` cannot represent a character of it.
    public func encodeURL(_ string: String) -> String? {
        try? URLFormEncoding.escape(string, encoding: stringEncoding)
    }
}
