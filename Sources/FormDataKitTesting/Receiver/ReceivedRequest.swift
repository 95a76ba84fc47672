import Foundation

/// One request as the ``FormReceiver`` saw it.
public struct ReceivedRequest: Sendable, Equatable, Codable {
    /// The HTTP method.
    public var method: String
    /// The request path (without the query).
    public var path: String
    /// The header fields, in the order received.
    public var headers: [ReceivedHeader]
    /// Body bytes received on the wire (after chunked decoding, before gzip inflation).
    public var bodyBytes: Int
    /// The SHA-256 of the body bytes received, when they were hashed (all routes except
    /// `/discard` without `?sha256=1`).
    public var bodySHA256: String?
    /// The size of the body after gzip inflation, when it came with `Content-Encoding: gzip`.
    public var inflatedBytes: Int?
    /// The parsed form, when the body was a form and was kept.
    public var form: ParsedForm?
    /// Why the body could not be parsed, when it could not.
    public var parseError: FormParseError?
    /// Where the raw capture of this request was written, when the receiver records.
    public var capturePath: String?

    /// The value of header `name` (case-insensitive; the first one).
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value, or nil when the request had no such header.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The `Content-Length` header as a number.
    public var contentLength: Int? { header("Content-Length").flatMap { Int($0) } }
}

/// A header field of a ``ReceivedRequest``.
public struct ReceivedHeader: Sendable, Equatable, Codable {
    /// The field name, as sent.
    public var name: String
    /// The field value.
    public var value: String

    /// A header `name: value`.
    /// - Parameters:
    ///   - name: the header's name, as sent.
    ///   - value: the header's value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension FormParseError: Codable {
    private enum CodingKeys: String, CodingKey { case offset, reason }

    /// Decodes `{"offset": N, "reason": "…"}`.
    /// - Parameter decoder: the decoder.
    /// - Throws: `DecodingError` for a missing or mistyped key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            offset: try container.decode(Int.self, forKey: .offset),
            reason: try container.decode(String.self, forKey: .reason))
    }

    /// Encodes `{"offset": N, "reason": "…"}`.
    /// - Parameter encoder: the encoder.
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(offset, forKey: .offset)
        try container.encode(reason, forKey: .reason)
    }
}

extension ReceivedRequest {
    /// A human-readable summary: method, path, headers, every field and every file with its size
    /// and SHA-256 (what `formdata serve` prints).
    public var summary: String {
        var lines = ["\(method) \(path)"]
        for header in headers { lines.append("  \(header.name): \(header.value)") }
        var body = "  body: \(bodyBytes) bytes"
        if let sha = bodySHA256 { body += ", sha256 \(sha)" }
        if let inflated = inflatedBytes { body += ", \(inflated) bytes after gzip inflation" }
        lines.append(body)
        if let form {
            for field in form.fields { lines.append("  field \(field.name.debugDescription) = \(field.value.debugDescription)") }
            for file in form.files {
                lines.append(
                    "  file  \(file.name.debugDescription): \(file.fileName.debugDescription), \(file.contentType ?? "no type"), \(file.size) bytes, sha256 \(file.sha256)"
                )
            }
        }
        if let parseError { lines.append("  parse error: \(parseError)") }
        return lines.joined(separator: "\n")
    }
}
