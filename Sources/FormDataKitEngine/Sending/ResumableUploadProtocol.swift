import FormDataKitBody
import FormDataKitWire
import Foundation

/// The wire side of Resumable Uploads for HTTP (draft-ietf-httpbis-resumable-upload) as this
/// library speaks it: the headers that announce an upload as resumable, the offset request
/// (`HEAD`), the append request (`PATCH`) with the body from an offset, and the answers' fields.
///
/// Versions: requests carry `Upload-Draft-Interop-Version: 6` (the version iOS 18.1's URLSession
/// sends, the newest of the three — 3, 5 and 6 — that swift-nio-extras' `HTTPResumableUploadHandler`
/// speaks) with the draft's `Upload-Complete: ?1` field, and the `PATCH` carries
/// `Content-Type: application/partial-upload`, which version 6 requires and the current draft keeps.
/// Version 3's `Upload-Incomplete` is not sent.
enum ResumableUploadProtocol {
    /// The interop version announced in `Upload-Draft-Interop-Version`.
    static let interopVersion = 6
    /// The status of the interim response that says the server can resume the upload.
    static let uploadResumptionSupported = 104
    /// The status of an append whose offset does not match the server's.
    static let offsetMismatch = 409
    /// The `UnderlyingError` domain of the error a send fails with once the upload was resumed
    /// as many times as allowed (its code is the limit).
    static let errorDomain = "FormDataKit.UploadResumption"

    /// `request` announced as resumable: the interop version and `Upload-Complete: ?1` added
    /// (replacing a caller's own).
    static func announcing(_ request: TransportRequest) -> TransportRequest {
        var request = request
        request.headers.removeAll { isProtocolHeader($0.name) }
        request.headers.append((name: "Upload-Draft-Interop-Version", value: String(interopVersion)))
        request.headers.append((name: "Upload-Complete", value: "?1"))
        return request
    }

    /// The request that asks the server how many bytes of the upload at `location` it has.
    static func offsetRequest(for original: TransportRequest, location: URL) -> TransportRequest {
        bodiless(original, method: "HEAD", url: location)
    }

    /// The request that asks whether the server at `original`'s URL resumes uploads: `OPTIONS`
    /// with the interop version (the server says so with `Upload-Limit`:
    /// ``supportsResumableUploads(_:)``). Sent first by a transport that cannot report the `104`.
    static func optionsRequest(for original: TransportRequest) -> TransportRequest {
        bodiless(original, method: "OPTIONS", url: original.url)
    }

    /// A request of the protocol without content: `method` to `url`, `original`'s fields but
    /// the body's description, and the interop version.
    private static func bodiless(_ original: TransportRequest, method: String, url: URL) -> TransportRequest {
        var request = original
        request.url = url
        request.method = method
        request.body = .none
        request.headers = original.headers.filter { keepsOnResumption($0.name) }
        request.headers.append((name: "Upload-Draft-Interop-Version", value: String(interopVersion)))
        return request
    }

    /// Whether an `OPTIONS` answer says the server resumes uploads: it carries `Upload-Limit`.
    static func supportsResumableUploads(_ head: TransportResponseHead) -> Bool {
        head.header("Upload-Limit") != nil
    }

    /// The request that creates the upload without its content (`Upload-Complete: ?0`, no body):
    /// `original`'s method, URL and fields (its `Content-Type` and `Content-Encoding` describe
    /// the upload), answered with `201` and the upload's `Location` (``createdUploadURL(in:requestURL:)``).
    /// The content then goes as an append from offset 0. For a transport that cannot report the
    /// `104` of an upload announced with its content.
    static func creationRequest(for original: TransportRequest) -> TransportRequest {
        var request = original
        request.body = .none
        request.headers.removeAll { isProtocolHeader($0.name) || $0.name.equalsIgnoringASCIICase("Content-Length") }
        request.headers.removeAll { $0.name.equalsIgnoringASCIICase("Expect") }
        request.headers.append((name: "Upload-Draft-Interop-Version", value: String(interopVersion)))
        request.headers.append((name: "Upload-Complete", value: "?0"))
        return request
    }

    /// The upload resource a creation request's answer gives: a `201` with `Location`, resolved
    /// against the URL the request went to; nil for anything else (the server's own answer).
    static func createdUploadURL(in head: TransportResponseHead, requestURL: URL) -> URL? {
        guard head.statusCode == 201 else { return nil }
        return location(in: head, requestURL: requestURL)
    }

    /// The request that sends the rest of `original`'s body, from `offset`, to the upload at
    /// `location` and completes it; on a fresh connection unless `freshConnection` is false (an
    /// append after an interruption must not go on a connection that may be the lost one's).
    static func appendRequest(
        for original: TransportRequest, location: URL, offset: UInt64, freshConnection: Bool = true
    ) -> TransportRequest {
        var request = original
        request.url = location
        request.method = "PATCH"
        request.opensFreshConnection = freshConnection
        request.body = original.body.suffix(from: offset)
        request.headers = original.headers.filter { keepsOnResumption($0.name) }
        request.headers.append((name: "Content-Type", value: "application/partial-upload"))
        request.headers.append((name: "Upload-Draft-Interop-Version", value: String(interopVersion)))
        request.headers.append((name: "Upload-Offset", value: String(offset)))
        request.headers.append((name: "Upload-Complete", value: "?1"))
        return request
    }

    /// The upload resource of a `104` interim response: its `Location`, resolved against the URL
    /// the request went to; nil for another status or no usable `Location`.
    static func resumptionURL(in head: TransportResponseHead, requestURL: URL) -> URL? {
        guard head.statusCode == uploadResumptionSupported else { return nil }
        return location(in: head, requestURL: requestURL)
    }

    /// A response's `Location` as an absolute http(s) URL, resolved against `requestURL`.
    private static func location(in head: TransportResponseHead, requestURL: URL) -> URL? {
        guard let location = head.header("Location"),
            let url = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: requestURL)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        return url
    }

    /// The server's offset in an offset response: its `Upload-Offset` (a non-negative integer,
    /// as an RFC 8941 integer is written), or nil.
    static func offset(in head: TransportResponseHead) -> UInt64? {
        guard let text = head.header("Upload-Offset")?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
            text.utf8.count <= 15, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return UInt64(text)
    }

    /// The error a send fails with when the upload was interrupted again after `limit`
    /// resumptions: a connection failure (ASI's category) naming the setting and the last cause.
    static func limitReached(_ limit: Int, lastError: FormDataError?) -> FormDataError {
        let cause = lastError.map { " (last: \($0))" } ?? ""
        return .connectionFailure(
            underlying: UnderlyingError(
                domain: errorDomain, code: limit,
                message: "The upload was interrupted again after numberOfTimesToResumeUpload (\(limit)) resumptions\(cause)"))
    }

    /// The error a send fails with when the server said it resumes uploads but answered the
    /// creation of one with a success that gives no upload URL (`statusCode`): the body was not
    /// sent, so the send must not look answered.
    static func uploadNotCreated(statusCode: Int, url: URL) -> FormDataError {
        .connectionFailure(
            underlying: UnderlyingError(
                domain: errorDomain, code: statusCode,
                message:
                    "\(url.absoluteString) said it resumes uploads (Upload-Limit) but answered the upload's creation with HTTP \(statusCode) "
                    + "and no usable Location: the body was not sent"))
    }

    /// The error a send fails with when the server no longer has the upload or answers the
    /// offset request with an unusable response.
    static func offsetUnavailable(statusCode: Int, location: URL) -> FormDataError {
        .connectionFailure(
            underlying: UnderlyingError(
                domain: errorDomain, code: statusCode,
                message: "The upload was interrupted and \(location.absoluteString) did not give its offset (HTTP \(statusCode))"))
    }

    /// The protocol's own request fields (set only by this type).
    private static func isProtocolHeader(_ name: String) -> Bool {
        ["Upload-Draft-Interop-Version", "Upload-Complete", "Upload-Incomplete", "Upload-Offset"].contains {
            name.equalsIgnoringASCIICase($0)
        }
    }

    /// Whether a field of the original request goes on its offset and append requests too:
    /// everything but the body's description (type, encoding) and the protocol's own fields.
    private static func keepsOnResumption(_ name: String) -> Bool {
        !isProtocolHeader(name) && !name.equalsIgnoringASCIICase("Content-Type") && !name.equalsIgnoringASCIICase("Content-Encoding")
            && !name.equalsIgnoringASCIICase("Expect")
    }
}

extension TransportRequest.Body {
    /// The body from byte `offset` on, read straight from its parts (the rest of a spooled or
    /// compressed body is the rest of its file): what an append sends after an interruption.
    func suffix(from offset: UInt64) -> TransportRequest.Body {
        guard offset > 0 else { return self }
        switch self {
        case .none: return .none
        case .data(let data):
            let start = data.startIndex + Int(min(offset, UInt64(data.count)))
            return .data(data.subdata(in: start..<data.endIndex))
        case .file(let path, let length):
            let skip = min(offset, length)
            return .source(
                BodySource(segments: [
                    BodySegment(.file(FileRange(path: path, offset: skip, length: length - skip, expectedFileSize: length)))
                ]))
        case .source(let source):
            return .source(source.suffix(from: offset))
        }
    }
}
