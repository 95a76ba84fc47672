import Foundation

/// Everything a ``FormDataRequest`` holds, guarded by its lock.
struct RequestState: Sendable {
    var url: URL
    var requestMethod = "POST"
    var postFormat = PostFormat.urlEncoded
    var stringEncoding = String.Encoding.utf8
    var shouldStreamPostDataFromDisk = false
    var shouldCompressRequestBody = false
    var compressionLevel = GzipDeflater.defaultLevel
    var adaptiveCompression = true
    var compressionThreads = 0
    var shouldLogDebugBody = false
    var debugBodyRedactedFields: Set<String> = []
    var boundary = MultipartBoundary.makeASIBoundary()
    var boundaryIsCustom = false
    /// The caller's own headers (the build's `Content-Type`/`Content-Length`/`Content-Encoding`
    /// are added when read through ``FormDataRequest/requestHeaders`` and when sent, never stored here).
    var requestHeaders: [String: String] = [:]
    var form = Form()
    /// A raw body (ASIHTTPRequest's `appendPostData:`, `setPostBody:`, `setPostBodyFilePath:`):
    /// sent as it is instead of an encoded form; nil when the body is the form.
    var rawBody: [RawBodyPart]?

    /// The built body; nil when none is built or the last one is stale.
    var built: BuiltBody?
    /// Bumped by every change that affects the body.
    var generation: UInt64 = 0
    /// The length of the body last handed to a transport (``FormDataRequest/postLength`` after
    /// the sent temporary file is gone, as ASI kept it).
    var lastSentPostLength: UInt64 = 0
    /// The URL before the last send's redirects (ASI's `originalURL`); nil when none was followed.
    var originalURL: URL?

    init(url: URL) { self.url = url }

    /// Drops the built body (its temporary files go with it).
    mutating func invalidateBody() {
        generation &+= 1
        built = nil
    }

    /// The method that is sent: a non-empty body turns `GET`, `DELETE` and `HEAD` into `POST`
    /// (ASIHTTPRequest's rule); other methods are kept.
    var effectiveMethod: String {
        if let built, built.postLength > 0 || !built.isLengthKnown, ["GET", "DELETE", "HEAD"].contains(requestMethod) { return "POST" }
        return requestMethod
    }

    /// The caller's headers with the built body's (`Content-Type`, `Content-Length`,
    /// `Content-Encoding`) over them, as ASIHTTPRequest showed them after a build.
    var effectiveHeaders: [String: String] {
        var headers = requestHeaders
        for header in built?.headers ?? [] { headers[header.name] = header.value }
        return headers
    }
}

/// One piece of a raw body, in order.
enum RawBodyPart: Sendable, Equatable {
    /// These bytes.
    case bytes(Data)
    /// The whole of this file, as it is when the body is built (its size then is the part's
    /// length; a file that changes after that fails the send rather than send other bytes).
    case file(path: String)
    /// The bytes of this stream, read when the body is sent.
    case stream(StreamedContent)
}
