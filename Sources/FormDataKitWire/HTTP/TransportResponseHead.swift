import Foundation

/// The head of a response: status and headers.
public struct TransportResponseHead: Sendable, Equatable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers (names as the server sent them; a repeated name is joined with `, `).
    public var headers: [String: String]
    /// The server's own reason phrase (`Not Found` in `HTTP/1.1 404 Not Found`), when the
    /// transport sees the status line (the curl transport does; URLSession does not).
    public var reasonPhrase: String?
    /// The HTTP version the response came in, when the transport says
    /// (``TransportCapabilities/httpVersions``).
    public var httpVersion: ResponseHTTPVersion?

    /// A head with `statusCode`, `headers` and the server's `reasonPhrase` if known.
    /// - Parameters:
    ///   - statusCode: the HTTP status code.
    ///   - headers: the response headers.
    ///   - reasonPhrase: the server's own reason phrase, nil when the transport does not see it.
    ///   - httpVersion: the version the response came in, nil when the transport does not say.
    public init(statusCode: Int, headers: [String: String], reasonPhrase: String? = nil, httpVersion: ResponseHTTPVersion? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.reasonPhrase = reasonPhrase
        self.httpVersion = httpVersion
    }

    /// The status line ASIHTTPRequest's `responseStatusMessage` held, e.g. `HTTP/1.1 404 Not Found`:
    /// with the server's reason phrase when the transport saw it, else the standard one for the code.
    public var statusLine: String {
        let reason = reasonPhrase ?? HTTPReasonPhrase.phrase(for: statusCode)
        return reason.isEmpty ? "HTTP/1.1 \(statusCode)" : "HTTP/1.1 \(statusCode) \(reason)"
    }

    /// Whether the body carries a content encoding (`gzip`…): it is decoded, and so bounded by the
    /// decompressed-size limit.
    public var isContentEncoded: Bool {
        guard let value = header("Content-Encoding") else { return false }
        let encoding = Self.trimmingBlanks(value)
        return !encoding.isEmpty && !encoding.equalsIgnoringASCIICase("identity")
    }

    /// The `Content-Length` header as a number (spaces and tabs around it ignored); nil when
    /// there is none or it is not a decimal number.
    package var contentLength: UInt64? {
        header("Content-Length").flatMap { UInt64(Self.trimmingBlanks($0)) }
    }

    /// `value` without the spaces and tabs (RFC 9110's optional whitespace) around it; compares
    /// bytes, as every response's head goes through here.
    static func trimmingBlanks(_ value: String) -> Substring {
        let scalars = value.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return value[value.endIndex...] }
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return value[first...last]
    }

    /// The value of header `name`, compared case-insensitively.
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value (the last one set, for a request), or nil when there is none.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }
}
