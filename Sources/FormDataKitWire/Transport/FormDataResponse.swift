import Foundation

/// A complete HTTP response: what `FormDataRequest.start()` returns.
///
/// A 404 or 500 is a response like any other, not an error: check ``statusCode``.
public struct FormDataResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: [String: String]
    /// The body, inflated when the server sent it gzip-compressed.
    public var body: Data
    /// The server's own reason phrase, when the transport saw the status line.
    public var reasonPhrase: String?
    /// The URL that answered, after redirects; nil when the transport does not say.
    public var url: URL?
    /// How the request authenticated, when the transport answers challenges itself
    /// (``FormDataTransport/answersAuthenticationChallenges``).
    public var authentication = AuthenticationOutcome()
    /// The HTTP version the response came in (`HTTP/2` when the request was multiplexed), nil
    /// when the transport does not say.
    public var httpVersion: ResponseHTTPVersion?

    /// A response with the given parts.
    /// - Parameters:
    ///   - statusCode: the HTTP status code.
    ///   - headers: the response headers (a repeated name joined with `, `).
    ///   - body: the body, decoded when it came with a `Content-Encoding`.
    ///   - reasonPhrase: the server's own reason phrase, when the transport saw the status line.
    ///   - url: the URL the response came from (after redirects), when known.
    public init(statusCode: Int, headers: [String: String], body: Data, reasonPhrase: String? = nil, url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.reasonPhrase = reasonPhrase
        self.url = url
    }

    /// The status line, e.g. `HTTP/1.1 200 OK` (ASIHTTPRequest's `responseStatusMessage`), with
    /// the server's reason phrase when the transport saw it.
    public var statusMessage: String {
        TransportResponseHead(statusCode: statusCode, headers: headers, reasonPhrase: reasonPhrase).statusLine
    }

    /// The value of header `name`, compared case-insensitively.
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value, or nil when the response has no such header.
    public func header(_ name: String) -> String? {
        TransportResponseHead(statusCode: statusCode, headers: headers).header(name)
    }

    /// The body as text, decoded with the `charset` of the `Content-Type` header, or
    /// ISO-8859-1 when there is none or it is unknown (ASIHTTPRequest's `defaultResponseEncoding`).
    /// Every charset a request body can be sent in is understood, the legacy ones (GBK, GB18030,
    /// Big5, EUC-KR, KOI8-R, …) through the platform's converter; bytes that are not valid in the
    /// charset are read as UTF-8 with replacement characters.
    public var string: String? { string(defaultEncoding: .isoLatin1) }

    /// The body as text, decoded as ``string`` is, but in `defaultEncoding` when the
    /// `Content-Type` names no charset or an unknown one (ASIHTTPRequest's `defaultResponseEncoding`).
    /// - Parameter defaultEncoding: the encoding for a response that names none.
    /// - Returns: the text.
    public func string(defaultEncoding: String.Encoding) -> String? {
        ResponseCharset.decode(body, contentType: header("Content-Type"), default: defaultEncoding)
    }
}

/// The text encoding a `Content-Type` header names, and decoding a body with it.
enum ResponseCharset {
    /// `body` as text in the charset `contentType` names (`default` when it names none).
    static func decode(_ body: Data, contentType: String?, default: String.Encoding = .isoLatin1) -> String {
        let encoding = encoding(forContentType: contentType) ?? `default`
        if let charset = LegacyCharsets.linuxReplacement(for: encoding) ?? LegacyCharsets.charset(for: encoding),
            let text = CharsetConverter.decode(body, charset)
        {
            return text
        }
        return String(data: body, encoding: encoding) ?? String(decoding: body, as: UTF8.self)
    }

    /// The encoding of the `charset` parameter of `contentType`, or nil when absent or unknown.
    static func encoding(forContentType contentType: String?) -> String.Encoding? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2,
                pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset"
            else { continue }
            let name = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"")).lowercased()
            switch name {
            case "utf-8", "utf8": return .utf8
            case "utf-16": return .utf16
            default: return LegacyCharsets.encoding(named: name)
            }
        }
        return nil
    }
}
