import Foundation

/// A complete HTTP response: what ``FormDataRequest/start()`` returns.
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

    /// A response with the given parts.
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
    public func header(_ name: String) -> String? {
        TransportResponseHead(statusCode: statusCode, headers: headers).header(name)
    }

    /// The body as text, decoded with the `charset` of the `Content-Type` header, or
    /// ISO-8859-1 when there is none (ASIHTTPRequest's `defaultResponseEncoding`).
    public var string: String? {
        let encoding = ResponseCharset.encoding(forContentType: header("Content-Type")) ?? .isoLatin1
        return String(data: body, encoding: encoding) ?? String(decoding: body, as: UTF8.self)
    }
}

/// The text encoding a `Content-Type` header names.
enum ResponseCharset {
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
            case "us-ascii", "ascii": return .ascii
            case "iso-8859-1", "latin1": return .isoLatin1
            case "iso-8859-2": return .isoLatin2
            case "windows-1252": return .windowsCP1252
            case "windows-1251": return .windowsCP1251
            case "utf-16": return .utf16
            case "shift_jis": return .shiftJIS
            case "euc-jp": return .japaneseEUC
            default: return nil
            }
        }
        return nil
    }
}
