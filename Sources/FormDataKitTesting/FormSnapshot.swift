import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A boundary-independent view of one HTTP request with a form (or other) body: method, URL, the
/// headers that matter, and the parts in body order — each with its name, file name, content
/// type and content (bytes, SHA-256, size).
///
/// Make one from a ``FormDataRequest`` (its built body: in memory, spooled or compressed), a
/// `URLRequest` (`httpBody`, `httpBodyStream` — read from a copy when the stream can be copied,
/// as FormDataKitAF's can — or a body file), a raw capture (``RawHTTPRequest``, what
/// `formdata serve --record` writes) or body bytes with their headers. A gzip body
/// (`Content-Encoding: gzip`) is inflated first; `Content-Length` is checked against the bytes.
///
/// Compare two with ``differences(from:tolerating:)`` (or ``FormSnapshot/matches(_:tolerating:)``,
/// `assertEquivalent(_:_:)`, `snapshotsMatch(_:_:)`); ``FormSnapshotTolerance`` names what may
/// differ.
public struct FormSnapshot: Sendable, Equatable, CustomStringConvertible {
    /// What kind of body the request has.
    public enum BodyKind: String, Sendable, Equatable {
        /// No body (or an empty one without a form content type).
        case none
        /// `application/x-www-form-urlencoded`.
        case urlEncoded
        /// `multipart/form-data`.
        case multipart
        /// Anything else (JSON, property lists, raw bytes): see ``FormSnapshot/rawBody``.
        case other
    }

    /// One part (a multipart part, or a URL-encoded pair).
    public struct Part: Sendable, Equatable {
        /// The field name.
        public var name: String
        /// The `filename` parameter; nil for a value field.
        public var fileName: String?
        /// The part's `Content-Type`, when it has one.
        public var contentType: String?
        /// Part headers other than `Content-Disposition` and `Content-Type`, in order.
        public var otherHeaders: [ReceivedHeader]
        /// The content (nil when it was larger than the snapshot's content limit: then only
        /// ``size`` and ``sha256`` are kept).
        public var content: Data?
        /// The content's size in bytes.
        public var size: Int
        /// The content's SHA-256, lowercase hex.
        public var sha256: String
        /// The charset its text is in (``ParsedPart/charset``: its own `Content-Type` charset,
        /// else the form's `_charset_` field, else the request's); nil when none was declared.
        /// Only ``text`` uses it: comparisons use the bytes.
        public var charset: String?

        /// Whether this part is a file (it has a file name).
        public var isFile: Bool { fileName != nil }

        /// A part; size and SHA-256 come from `content`, which is dropped when over `contentLimit`.
        /// - Parameters:
        ///   - name: the part's (or pair's) name.
        ///   - fileName: its `filename`, nil for a value part.
        ///   - contentType: its `Content-Type`, nil when it has none.
        ///   - otherHeaders: its other part headers.
        ///   - content: its bytes.
        ///   - contentLimit: parts larger than this keep only their size and SHA-256.
        ///   - charset: the charset its content is text in (an IANA name), nil when none was declared.
        public init(
            name: String, fileName: String?, contentType: String?, otherHeaders: [ReceivedHeader] = [],
            content: Data, contentLimit: Int = FormSnapshot.defaultContentLimit, charset: String? = nil
        ) {
            self.name = name
            self.fileName = fileName
            self.contentType = contentType
            self.otherHeaders = otherHeaders
            self.size = content.count
            self.sha256 = SHA256.hex(content)
            self.content = content.count <= contentLimit ? content : nil
            self.charset = charset
        }

        /// The content as text, for value fields: in ``charset`` when it names a charset this
        /// platform converts and the bytes are valid in it, else UTF-8, else ISO-8859-1.
        public var text: String? { content.map { FormBodyParser.text($0, charset: charset) } }
    }

    /// Headers left out of snapshots by default: transport details that differ between clients
    /// without changing what a server receives (`Host`, `Content-Length` — checked, not kept —,
    /// `User-Agent`, `Accept*`, `Connection`, `Expect`, …).
    public static let defaultIgnoredHeaders: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "expect", "te", "upgrade",
        "proxy-connection", "user-agent", "accept", "accept-encoding", "accept-language",
    ]

    /// Parts larger than this keep only their size and SHA-256: 1 MiB.
    public static let defaultContentLimit = 1 << 20

    /// The HTTP method.
    public var method: String
    /// The absolute URL (scheme and host lowercased, an empty path as `/`).
    public var url: String
    /// The kept header fields (without `Content-Type`, which is split below), in order, names as sent.
    public var headers: [ReceivedHeader]
    /// The media type of `Content-Type` (e.g. `multipart/form-data`), as sent.
    public var mediaType: String?
    /// The `Content-Type` parameters other than `boundary` (e.g. `charset`), names as sent.
    public var contentTypeParameters: [ReceivedHeader]
    /// The multipart boundary.
    public var boundary: String?
    /// What the body is.
    public var bodyKind: BodyKind
    /// The parts, in body order (empty unless the body is a form).
    public var parts: [Part]
    /// The body for ``BodyKind/other`` (after gzip inflation).
    public var rawBody: Data?

    /// The value fields (parts without a file name), in order.
    public var fields: [Part] { parts.filter { !$0.isFile } }
    /// The file parts, in order.
    public var files: [Part] { parts.filter(\.isFile) }

    /// The `charset` parameter of `Content-Type`.
    public var charset: String? {
        contentTypeParameters.first { $0.name.lowercased() == "charset" }?.value
    }

    /// The value of kept header `name` (case-insensitive).
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value, or nil when the snapshot did not keep such a header.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    // MARK: - Making snapshots

    /// A snapshot of a request given as method, URL, header fields and body bytes (as sent:
    /// gzip-compressed when `Content-Encoding` says so).
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - url: the request's URL (or path).
    ///   - headers: the header fields, in order.
    ///   - body: the body bytes as sent.
    ///   - ignoringHeaders: lowercase header names not to keep (``defaultIgnoredHeaders``).
    ///   - contentLimit: parts larger than this keep only size and SHA-256.
    ///   - maximumInflatedSize: the most bytes a gzip body may inflate to (``maximumInflatedSize``).
    /// - Throws: ``FormSnapshotError/malformedBody(_:)`` when the body is not what the headers say,
    ///   or inflates past `maximumInflatedSize`.
    public init(
        method: String, url: String, headers: [ReceivedHeader], body: Data,
        ignoringHeaders: Set<String> = FormSnapshot.defaultIgnoredHeaders,
        contentLimit: Int = FormSnapshot.defaultContentLimit,
        maximumInflatedSize: Int = FormSnapshot.maximumInflatedSize
    ) throws(FormSnapshotError) {
        func value(_ name: String) -> String? {
            let values = headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }
        if let declared = value("Content-Length"), value("Transfer-Encoding") == nil {
            guard let length = Int(declared.trimmingCharacters(in: .whitespaces)), length == body.count else {
                throw .malformedBody(
                    FormParseError(
                        offset: body.count,
                        reason: "Content-Length says \(declared) bytes but the body has \(body.count)"))
            }
        }
        var body = body
        if let encoding = value("Content-Encoding")?.lowercased(), encoding.contains("gzip"), !body.isEmpty {
            do { body = try Self.inflate(body, limit: maximumInflatedSize) } catch { throw .malformedBody(error) }
        }
        self.method = method
        self.url = Self.normalized(url)
        let ignored = ignoringHeaders.union(["content-type"])
        self.headers = headers.filter { !ignored.contains($0.name.lowercased()) }
        self.parts = []
        self.rawBody = nil
        self.contentTypeParameters = []
        self.boundary = nil
        guard let contentType = value("Content-Type") else {
            mediaType = nil
            bodyKind = body.isEmpty ? .none : .other
            rawBody = body.isEmpty ? nil : body
            return
        }
        let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        mediaType = media
        for (name, parameterValue) in Self.rawParameters(of: contentType) {
            if name.lowercased() == "boundary" {
                boundary = parameterValue
            } else {
                contentTypeParameters.append(ReceivedHeader(name: name, value: parameterValue))
            }
        }
        switch media.lowercased() {
        case "multipart/form-data": bodyKind = .multipart
        case "application/x-www-form-urlencoded": bodyKind = .urlEncoded
        default:
            bodyKind = body.isEmpty ? .none : .other
            rawBody = body.isEmpty ? nil : body
            return
        }
        let parsed: [ParsedPart]
        do { parsed = try FormBodyParser.parseParts(body, contentType: contentType) } catch { throw .malformedBody(error) }
        parts = parsed.map { part in
            Part(
                name: part.name, fileName: part.fileName, contentType: part.header("Content-Type"),
                otherHeaders: part.headers.filter {
                    !["content-disposition", "content-type"].contains($0.name.lowercased())
                },
                content: part.content, contentLimit: contentLimit, charset: part.charset)
        }
    }

    /// A snapshot of a raw capture (what `formdata serve --record` writes).
    /// - Parameters:
    ///   - capture: the parsed capture.
    ///   - ignoringHeaders: lowercase header names not to keep (``defaultIgnoredHeaders``).
    ///   - contentLimit: parts larger than this keep only size and SHA-256.
    /// - Throws: ``FormSnapshotError/malformedBody(_:)`` when the body is not what its headers say.
    public init(
        capture: RawHTTPRequest, ignoringHeaders: Set<String> = FormSnapshot.defaultIgnoredHeaders,
        contentLimit: Int = FormSnapshot.defaultContentLimit
    ) throws(FormSnapshotError) {
        try self.init(
            method: capture.method, url: capture.url, headers: capture.headers, body: capture.body,
            ignoringHeaders: ignoringHeaders, contentLimit: contentLimit)
    }

    /// A snapshot of the raw HTTP request file at `path`.
    /// - Parameters:
    ///   - path: the capture file (`N-METHOD.http`).
    ///   - ignoringHeaders: lowercase header names not to keep (``defaultIgnoredHeaders``).
    /// - Throws: ``FormSnapshotError/unreadable(path:reason:)``, or what parsing the capture or its
    ///   body throws.
    public init(contentsOfCapture path: URL, ignoringHeaders: Set<String> = FormSnapshot.defaultIgnoredHeaders) throws(FormSnapshotError) {
        try self.init(capture: try RawHTTPRequest(contentsOf: path), ignoringHeaders: ignoringHeaders)
    }

    /// A snapshot of body bytes with just their `Content-Type` (method `POST`, URL `/`): what
    /// `formdata diff --content-type` compares.
    /// - Parameters:
    ///   - body: the body bytes, as sent.
    ///   - contentType: the body's `Content-Type`.
    ///   - contentEncoding: `gzip` for a compressed body, nil for none.
    /// - Throws: ``FormSnapshotError/malformedBody(_:)`` when the body is not what `contentType` says.
    public init(body: Data, contentType: String, contentEncoding: String? = nil) throws(FormSnapshotError) {
        var headers = [ReceivedHeader(name: "Content-Type", value: contentType)]
        if let contentEncoding { headers.append(ReceivedHeader(name: "Content-Encoding", value: contentEncoding)) }
        try self.init(method: "POST", url: "http://localhost/", headers: headers, body: body)
    }

    /// A snapshot of what `request` sends, whatever its transport: it builds the body if needed
    /// and reads it from its parts (or its compressed form), spooling nothing; the headers are ``FormDataRequest/requestHeaders`` plus
    /// the pre-emptive `Authorization: Basic` that ``FormDataRequest/username`` adds when sent.
    /// - Parameters:
    ///   - request: the request (built now if it is not).
    ///   - ignoringHeaders: lowercase header names not to keep (``defaultIgnoredHeaders``).
    ///   - contentLimit: parts larger than this keep only size and SHA-256.
    /// - Throws: ``FormSnapshotError/buildFailed(_:)`` when the body cannot be built or read, or
    ///   ``FormSnapshotError/unreadable(path:reason:)`` for its compressed file.
    public init(
        _ request: FormDataRequest, ignoringHeaders: Set<String> = FormSnapshot.defaultIgnoredHeaders,
        contentLimit: Int = FormSnapshot.defaultContentLimit
    ) throws(FormSnapshotError) {
        do { try request.buildPostBody() } catch let error as FormDataError { throw .buildFailed(error) } catch {
            throw .streamFailed(reason: "\(error)")
        }
        // The bytes every transport sends: the compressed body, or the encoded parts (read from
        // them, so nothing is spooled for the snapshot).
        var body = Data()
        if let compressed = request.compressedPostBody {
            body = compressed
        } else if let path = request.compressedPostBodyFilePath {
            do { body = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw .unreadable(path: path, reason: error.localizedDescription)
            }
        } else if let source = request.bodySource {
            do { body = try source.readAll() } catch { throw .buildFailed(error) }
        }
        var headers = request.requestHeaders.sorted { $0.key < $1.key }.map { ReceivedHeader(name: $0.key, value: $0.value) }
        if let username = request.username,
            !headers.contains(where: { $0.name.caseInsensitiveCompare("Authorization") == .orderedSame })
        {
            let token = Data("\(username):\(request.password ?? "")".utf8).base64EncodedString()
            headers.append(ReceivedHeader(name: "Authorization", value: "Basic \(token)"))
        }
        try self.init(
            method: request.requestMethod, url: request.url.absoluteString, headers: headers, body: body,
            ignoringHeaders: ignoringHeaders, contentLimit: contentLimit)
    }

    /// A snapshot of `request`: its `httpBody`, else the file at `bodyFile` (the file
    /// `writingStreamContentsToFile` wrote), else its `httpBodyStream` — read from a copy when
    /// the stream conforms to `NSCopying` (FormDataKitAF's `AFMultipartBodyStream` does), so the
    /// request can still be sent; otherwise the stream is read and used up.
    /// - Parameters:
    ///   - request: the request (FormDataKitAF's, or any `URLRequest`).
    ///   - bodyFile: the file its multipart body was written to, when it has no body of its own.
    ///   - ignoringHeaders: lowercase header names not to keep (``defaultIgnoredHeaders``).
    ///   - contentLimit: parts larger than this keep only size and SHA-256.
    /// - Throws: ``FormSnapshotError/streamFailed(reason:)`` when its body stream cannot be read,
    ///   ``FormSnapshotError/unreadable(path:reason:)`` for `bodyFile`, or
    ///   ``FormSnapshotError/malformedBody(_:)``.
    public init(
        _ request: URLRequest, bodyFile: URL? = nil, ignoringHeaders: Set<String> = FormSnapshot.defaultIgnoredHeaders,
        contentLimit: Int = FormSnapshot.defaultContentLimit
    ) throws(FormSnapshotError) {
        var body = Data()
        if let data = request.httpBody, !data.isEmpty || (bodyFile == nil && request.httpBodyStream == nil) {
            body = data
        } else if let bodyFile {
            do { body = try Data(contentsOf: bodyFile) } catch {
                throw .unreadable(path: bodyFile.path, reason: error.localizedDescription)
            }
        } else if let stream = request.httpBodyStream {
            let source = ((stream as? NSCopying)?.copy(with: nil) as? InputStream) ?? stream
            body = try Self.drain(source)
        }
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { ReceivedHeader(name: $0.key, value: $0.value) }
        try self.init(
            method: request.httpMethod ?? "GET", url: request.url?.absoluteString ?? "", headers: headers, body: body,
            ignoringHeaders: ignoringHeaders, contentLimit: contentLimit)
    }

    // MARK: - Helpers

    private static func drain(_ stream: InputStream) throws(FormSnapshotError) -> Data {
        do {
            return try InputStreamReading.readAll(stream)
        } catch {
            if case InputStreamReading.Failure.readFailed(let reason) = error { throw .streamFailed(reason: reason) }
            throw .streamFailed(reason: "\(error)")
        }
    }

    /// The most bytes a gzip body of a capture may inflate to (256 MiB): a capture is input from
    /// anywhere, and a few KiB of gzip can inflate to gigabytes.
    public static let maximumInflatedSize = 256 << 20

    private static func inflate(_ data: Data, limit: Int = maximumInflatedSize) throws(FormParseError) -> Data {
        let inflater = try StreamInflater()
        var out = Data()
        var exceeded = false
        try inflater.feed(data, offset: 0) { chunk in
            guard !exceeded, out.count + chunk.count <= limit else {
                exceeded = true
                return
            }
            out.append(contentsOf: chunk)
        }
        if exceeded {
            throw FormParseError(offset: 0, reason: "The gzip body inflates to more than \(limit) bytes")
        }
        guard inflater.isFinished else {
            throw FormParseError(offset: data.count, reason: "The gzip body is truncated")
        }
        return out
    }

    /// `url` with a lowercase scheme and host and `/` for an empty path.
    static func normalized(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.scheme != nil else { return url }
        components.scheme = components.scheme?.lowercased()
        if let host = components.percentEncodedHost { components.percentEncodedHost = host.lowercased() }
        if components.percentEncodedPath.isEmpty && components.host != nil { components.percentEncodedPath = "/" }
        return components.string ?? url
    }

    /// The parameters of a header value with their names as sent (quotes removed).
    static func rawParameters(of headerValue: String) -> [(String, String)] {
        // FormBodyParser.parameters lowercases names; keep the case here for exact comparisons.
        var names: [String] = []
        for piece in headerValue.split(separator: ";").dropFirst() {
            let name = piece.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            names.append(name)
        }
        let values = FormBodyParser.parameters(of: headerValue)
        return zip(names, values).map { ($0, $1.1) }
    }
}
