import Foundation

/// A body produced by ``FormDataRequest/buildPostBody()``.
struct BuiltBody: Sendable {
    /// The encoded (uncompressed) body.
    var source: BodySource
    /// The body in memory, when it is not spooled.
    var postBody: Data?
    /// The spooled body, when it is on disk.
    var spooledFile: TemporaryFile?
    /// The gzip-compressed body, when compression is on and the body is not empty (it was
    /// compressed straight from ``source``: nothing was spooled uncompressed).
    var compressed: CompressedBody?
    /// The number of bytes that will be sent.
    var postLength: UInt64
    /// The debug log text, when the debug log is on.
    var debugString: String?
    /// The `Content-Type` the body needs, or nil for no body.
    var contentType: String?
    /// Whether the form had files (which forces multipart and spooling).
    var hasFiles: Bool
    /// The boundary used, for multipart bodies.
    var boundary: String?
    /// Whether the body was built for a transport that streams ``source`` itself (so an
    /// uncompressed body that would be spooled was not).
    var streamedByTransport = false

    static let none = BuiltBody(source: .empty, postBody: nil, spooledFile: nil, compressed: nil, postLength: 0,
                                debugString: nil, contentType: nil, hasFiles: false, boundary: nil)

    /// What goes on the wire.
    enum Payload: Sendable {
        /// No body.
        case none
        /// These bytes, from memory.
        case memory(Data)
        /// The whole of this file (spooled or compressed), sent with its exact length.
        case file(TemporaryFile)
        /// The encoded body, streamed by the transport (built for a streaming transport: no spool).
        case source(BodySource)
    }

    /// The bytes the transport sends: the compressed body when there is one, else the spooled
    /// file, else the in-memory body.
    var payload: Payload {
        switch compressed {
        case .memory(let data)?: return .memory(data)
        case .file(let file, _)?: return .file(file)
        case nil: break
        }
        if let spooledFile { return .file(spooledFile) }
        if let postBody, !postBody.isEmpty { return .memory(postBody) }
        if streamedByTransport && source.length > 0 { return .source(source) }
        return .none
    }

    /// The `Content-Encoding` the payload needs (`gzip` for a compressed body), or nil.
    var contentEncoding: String? { compressed == nil ? nil : "gzip" }
}

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
    var requestHeaders: [String: String] = [:]
    var form = Form()
    /// A raw body (ASIHTTPRequest's `appendPostData:`, `setPostBody:`, `setPostBodyFilePath:`):
    /// sent as it is instead of an encoded form; nil when the body is the form.
    var rawBody: [RawBodyPart]?
    /// The size of each added file (by path) when it was added: a build refuses a file whose size
    /// changed since, rather than silently send other contents than the caller added.
    var fileSizesAtAdd: [String: UInt64] = [:]
    /// Whether the next build is for a transport that streams the body source (no spool).
    var buildForStreamingTransport = false

    /// The built body; nil when none is built or the last one is stale.
    var built: BuiltBody?
    /// Bumped by every change that affects the body.
    var generation: UInt64 = 0
    /// Header names the last build set (removed again when the body goes stale).
    var headersSetByBuild: [String] = []
    /// The length of the body last handed to a transport (``FormDataRequest/postLength`` after
    /// the sent temporary file is gone, as ASI kept it).
    var lastSentPostLength: UInt64 = 0
    /// The URL before the last send's redirects (ASI's `originalURL`); nil when none was followed.
    var originalURL: URL?

    init(url: URL) { self.url = url }

    /// Drops the built body (its temporary file goes with it) and the headers it set.
    mutating func invalidateBody() {
        generation &+= 1
        built = nil
        for name in headersSetByBuild { requestHeaders[name] = nil }
        headersSetByBuild = []
    }
}

/// One piece of a raw body, in order.
enum RawBodyPart: Sendable, Equatable {
    /// These bytes.
    case bytes(Data)
    /// The whole of this file, as it is when the body is built (its size then is the part's
    /// length; a file that changes after that fails the send rather than send other bytes).
    case file(path: String)
}
