import Foundation

/// ASIHTTPRequest's remaining blocks and its response-to-file settings.
extension FormDataRequest {
    // MARK: - Blocks

    /// Called when the response head arrives, with its header fields (after the delegate's
    /// ``FormDataRequestDelegate/request(_:didReceiveResponseHeaders:)``; ASIHTTPRequest's
    /// `headersReceivedBlock`).
    public var headersReceivedBlock: (@Sendable (_ responseHeaders: [String: String]) -> Void)? {
        get { sending.withLock { $0.callbacks.headersReceivedBlock } }
        set { sending.withLock { $0.callbacks.headersReceivedBlock = newValue } }
    }

    /// Called as the response body arrives with the bytes received since the last call and the
    /// response's `Content-Length` (0 when it has none) — ASIHTTPRequest's
    /// `bytesReceivedBlock(size, total)`. The sizes add up to the body's decoded length.
    public var bytesReceivedBlock: (@Sendable (_ size: UInt64, _ total: UInt64) -> Void)? {
        get { sending.withLock { $0.callbacks.bytesReceivedBlock } }
        set { sending.withLock { $0.callbacks.bytesReceivedBlock = newValue } }
    }

    /// Called with each piece of the response body as it arrives (decoded when it came gzip),
    /// in order — ASIHTTPRequest's `dataReceivedBlock`. As in ASIHTTPRequest, with it set the
    /// body is handed to the block only: ``responseData`` stays nil, and nothing is written to
    /// ``downloadDestinationPath``.
    public var dataReceivedBlock: (@Sendable (_ data: Data) -> Void)? {
        get { sending.withLock { $0.callbacks.dataReceivedBlock } }
        set { sending.withLock { $0.callbacks.dataReceivedBlock = newValue } }
    }

    /// Called when a send starts with the body's length (ASIHTTPRequest's
    /// `uploadSizeIncrementedBlock`), after ``startedBlock``. Not called for a request in a
    /// ``NetworkQueue``, which sized its batch when the request was added (as in ASI).
    public var uploadSizeIncrementedBlock: (@Sendable (_ size: Int64) -> Void)? {
        get { sending.withLock { $0.callbacks.uploadSizeIncrementedBlock } }
        set { sending.withLock { $0.callbacks.uploadSizeIncrementedBlock = newValue } }
    }

    /// Called when a response head with a `Content-Length` arrives, with that length
    /// (ASIHTTPRequest's `downloadSizeIncrementedBlock`), before the delegate hears of the
    /// headers. Not called for a request in a ``NetworkQueue`` (the queue counts it).
    public var downloadSizeIncrementedBlock: (@Sendable (_ size: Int64) -> Void)? {
        get { sending.withLock { $0.callbacks.downloadSizeIncrementedBlock } }
        set { sending.withLock { $0.callbacks.downloadSizeIncrementedBlock = newValue } }
    }

    // MARK: - Response to a file

    /// Where the response body is written (ASIHTTPRequest's `downloadDestinationPath`); nil (the
    /// default) keeps it in ``responseData``.
    ///
    /// The body is streamed to ``temporaryFileDownloadPath`` (or a hidden file next to the
    /// destination) with bounded memory, off the transport's threads, and moved to this path
    /// only when the response is complete — replacing what was there in one rename. The
    /// destination never holds a partial body; on failure or cancel the temporary file is
    /// removed and the destination left as it was. A response that is not a success status is
    /// written too (ASI did): check ``responseStatusCode``. ``responseData`` stays nil.
    /// Responses larger than ``maximumResponseSize`` (256 MiB by default) fail: raise it for
    /// large downloads.
    public var downloadDestinationPath: String? {
        get { sending.withLock { $0.settings.downloadDestinationPath } }
        set { sending.withLock { $0.settings.downloadDestinationPath = newValue } }
    }

    /// Where the body is written while it arrives when ``downloadDestinationPath`` is set
    /// (ASIHTTPRequest's `temporaryFileDownloadPath`); nil (the default): a hidden file in the
    /// destination's directory. The file is created new (0600) before anything is sent, and moved
    /// or removed at the end — never left behind. A path that exists (a file, a symbolic link, a
    /// FIFO, a device, another download's temporary file) is refused, not reused as ASI did: the
    /// send fails with `FormDataError.fileManagement(underlying:)` wrapping
    /// `FormDataError.fileExists(path:)` naming it, and what is there is left untouched.
    public var temporaryFileDownloadPath: String? {
        get { sending.withLock { $0.settings.temporaryFileDownloadPath } }
        set { sending.withLock { $0.settings.temporaryFileDownloadPath = newValue } }
    }
}
