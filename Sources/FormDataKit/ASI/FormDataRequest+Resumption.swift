import Foundation

/// Resumable uploads (Resumable Uploads for HTTP, draft-ietf-httpbis-resumable-upload): beyond
/// ASIHTTPRequest, which started a dropped upload again from its first byte.
///
/// With ``shouldResumeInterruptedUploads`` on, the request tells the server it can resume
/// (`Upload-Draft-Interop-Version: 6`, `Upload-Complete: ?1`); a server that can answers
/// `104 Upload Resumption Supported` with the upload's URL (``uploadResumptionURL``). When the
/// connection is then lost mid-body, the request asks the server how much arrived (`HEAD`) and
/// sends the rest from there (`PATCH`, `Upload-Offset`, `application/partial-upload`), read
/// straight from the parts (or from the compressed file of a gzip body: the offset counts
/// compressed bytes) — nothing the server has is sent again. A server without support (no `104`)
/// makes it an ordinary send. ``CurlTransport`` resumes so; `AsyncHTTPClientTransport`, which
/// never reports a `104`, creates the upload first (`OPTIONS`, then a creation request without
/// the content, answered `201` with the upload's URL, then the body as a `PATCH` from 0: see
/// ``TransportCapabilities/resumableUploads``); ``URLSessionTransport`` fails the send before
/// anything is sent, naming the setting.
extension FormDataRequest {
    /// Whether an upload whose connection is lost mid-body is resumed from the server's offset
    /// rather than failing (off by default). Needs `CurlTransport` (the default on Linux) or
    /// `AsyncHTTPClientTransport`: `URLSessionTransport` fails the send with
    /// `FormDataError.unableToCreateRequest(underlying:)` naming `shouldResumeInterruptedUploads`.
    public var shouldResumeInterruptedUploads: Bool {
        get { sending.withLock { $0.settings.network.resumesInterruptedUploads } }
        set { sending.withLock { $0.settings.network.resumesInterruptedUploads = newValue } }
    }

    /// How many times one send resumes its upload before it fails (3 by default): each offset
    /// request — after a lost connection, or again after the server answered `409` (offset
    /// mismatch) — counts once. Past it the send fails with
    /// `FormDataError.connectionFailure(underlying:)`, whose underlying error's domain is
    /// `FormDataKit.UploadResumption`, its code the limit, its message naming this setting.
    public var numberOfTimesToResumeUpload: Int {
        get { sending.withLock { $0.settings.network.maximumUploadResumptions } }
        set { sending.withLock { $0.settings.network.maximumUploadResumptions = max(0, newValue) } }
    }

    /// The upload's URL on the server (the `Location` of its `104`, or of the `201` that created
    /// it), once the send has started and the server said it can resume; nil otherwise. Kept
    /// after the send ends.
    public var uploadResumptionURL: URL? { sending.withLock { $0.current.send?.uploadResumption.url } }

    /// How many times the last send resumed its upload (0 when it was never interrupted).
    public var uploadResumeCount: Int { sending.withLock { $0.current.send?.uploadResumption.count ?? 0 } }
}
