import Foundation

/// A body produced by ``FormDataRequest/buildPostBody()``: the encoded form and what the build
/// decided about it. The same whatever transport later sends it; where the bytes go at send time
/// is `BodyDelivery`'s job.
struct BuiltBody: Sendable {
    /// The encoded (uncompressed) body.
    var source: BodySource
    /// The body in memory: set at build for a body that is all in memory and not streamed from
    /// disk (ASIHTTPRequest's `postBody`); nil otherwise.
    var postBody: Data?
    /// The body spooled to a temporary file: made on demand (``FormDataRequest/postBodyFilePath``
    /// or a transport that takes files and not streams), never at build.
    var spooledFile: TemporaryFile?
    /// The gzip-compressed body, when compression is on and the body is not empty (compressed
    /// straight from ``source``: nothing is spooled uncompressed).
    var compressed: CompressedBody?
    /// Whether ``source`` is the gzip of the encoded body, compressed while it is sent (a body
    /// with streams; ``compressed`` is nil then).
    var compressesWhileSent = false
    /// The number of bytes that will be sent.
    var postLength: UInt64
    /// The debug log text, when the debug log is on.
    var debugString: String?
    /// The `Content-Type` the body needs, or nil (no body, or a raw body).
    var contentType: String?
    /// Whether the form had files (which forces multipart and keeps the body on disk).
    var hasFiles: Bool
    /// The boundary used, for multipart bodies.
    var boundary: String?

    /// A built body of these parts.
    init(
        source: BodySource, postBody: Data?, spooledFile: TemporaryFile?, compressed: CompressedBody?, postLength: UInt64,
        debugString: String?, contentType: String?, hasFiles: Bool, boundary: String?
    ) {
        self.source = source
        self.postBody = postBody
        self.spooledFile = spooledFile
        self.compressed = compressed
        self.postLength = postLength
        self.debugString = debugString
        self.contentType = contentType
        self.hasFiles = hasFiles
        self.boundary = boundary
    }

    static let none = BuiltBody(
        source: .empty, postBody: nil, spooledFile: nil, compressed: nil, postLength: 0,
        debugString: nil, contentType: nil, hasFiles: false, boundary: nil)

    /// Whether the body's length is known before it is sent: false for a body with a stream of
    /// unknown length (sent chunked), unless it was compressed at build.
    var isLengthKnown: Bool { compressed != nil || source.isLengthKnown }

    /// The `Content-Encoding` the body needs (`gzip` for a compressed body), or nil.
    var contentEncoding: String? { compressed == nil && !compressesWhileSent ? nil : "gzip" }

    /// The headers the build adds to the caller's when the body is sent (or read through
    /// ``FormDataRequest/requestHeaders``): `Content-Type`, `Content-Length` (or
    /// `Transfer-Encoding: chunked` for a length not known), `Content-Encoding`.
    var headers: [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        out.reserveCapacity(3)
        if let contentType { out.append(("Content-Type", contentType)) }
        if !isLengthKnown {
            out.append(("Transfer-Encoding", "chunked"))
            if let contentEncoding { out.append(("Content-Encoding", contentEncoding)) }
        } else if postLength > 0 {
            out.append(("Content-Length", String(postLength)))
            if let contentEncoding { out.append(("Content-Encoding", contentEncoding)) }
        }
        return out
    }

    /// The bytes a transport that takes `forms` is given (see `BodyDelivery`): the compressed
    /// body when there is one, the in-memory body, an existing spool, or the encoded parts. The
    /// delivered body's `BodyDelivery/Delivered/temporaryFile` is the temporary file of this
    /// body the send uses, however it is handed over (a spool made now, an existing spool, the
    /// compressed file): the send owns it and removes it when it ends.
    func delivered(to forms: TransportBodyForms, inMemoryLimit: UInt64) throws(FormDataError) -> BodyDelivery.Delivered {
        switch compressed {
        case .memory(let data)?:
            return BodyDelivery.Delivered(body: .data(data), temporaryFile: nil)
        case .file(let file, let length)?:
            let whole = BodySource(segments: [BodySegment(.file(FileRange(path: file.path, length: length, expectedFileSize: length)))])
            var delivered = try BodyDelivery.deliver(whole, to: forms, inMemoryLimit: inMemoryLimit, spooled: file)
            delivered.temporaryFile = file
            return delivered
        case nil:
            break
        }
        if let postBody, !postBody.isEmpty, forms.contains(.bytes) {
            return BodyDelivery.Delivered(body: .data(postBody), temporaryFile: nil)
        }
        var delivered = try BodyDelivery.deliver(source, to: forms, inMemoryLimit: inMemoryLimit, spooled: spooledFile)
        if delivered.temporaryFile == nil, case .file(let path, _) = delivered.body, let spooledFile, spooledFile.path == path {
            delivered.temporaryFile = spooledFile
        }
        return delivered
    }

    /// Whether `file` holds this body's bytes (its spool or its compressed file).
    func owns(_ file: TemporaryFile) -> Bool {
        if spooledFile === file { return true }
        if case .file(let compressedFile, _)? = compressed, compressedFile === file { return true }
        return false
    }
}
