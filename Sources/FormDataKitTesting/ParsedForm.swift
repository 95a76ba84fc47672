import FormDataKit
import Foundation

/// A form as a receiver parsed it: value fields and file parts, in body order.
public struct ParsedForm: Sendable, Equatable, Codable {
    /// The value fields (multipart parts without a file name, or URL-encoded pairs), in order.
    public var fields: [ParsedField]
    /// The file parts (multipart parts with a `filename` parameter), in order.
    public var files: [ParsedFile]

    /// A form with the given fields and files.
    /// - Parameters:
    ///   - fields: the value fields, in order.
    ///   - files: the file parts, in order.
    public init(fields: [ParsedField] = [], files: [ParsedFile] = []) {
        self.fields = fields
        self.files = files
    }

    /// The form made of `parts`: parts with a file name are files, the others fields.
    /// - Parameter parts: the parts, in body order.
    public init(parts: [ParsedPart]) {
        self.init()
        for part in parts {
            if let fileName = part.fileName {
                files.append(ParsedFile(name: part.name, fileName: fileName, contentType: part.header("Content-Type"), data: part.content))
            } else {
                fields.append(ParsedField(name: part.name, value: part.text))
            }
        }
    }

    /// The value of the first field named `name`.
    /// - Parameter name: the field's name (case-sensitive).
    /// - Returns: its value, or nil when there is no such field.
    public func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// The first file part named `name`.
    /// - Parameter name: the part's name (case-sensitive).
    /// - Returns: the file part, or nil when there is none.
    public func file(_ name: String) -> ParsedFile? { files.first { $0.name == name } }
}

/// One part of a form body as it was on the wire: its name, its `filename` parameter (nil for a
/// value field), every part header, and the raw content bytes. URL-encoded pairs are parts
/// without headers whose content is the percent-decoded value.
public struct ParsedPart: Sendable, Equatable {
    /// The `name` parameter of `Content-Disposition` (or the decoded URL-encoded name).
    public var name: String
    /// The `filename` parameter, when the part has one.
    public var fileName: String?
    /// The part's header fields, in order, as sent.
    public var headers: [ReceivedHeader]
    /// The content bytes.
    public var content: Data
    /// The charset its text is in: its own `Content-Type` charset, else the form's `_charset_`
    /// field, else the request's `charset` parameter; nil when none was declared.
    public var charset: String?

    /// A part.
    /// - Parameters:
    ///   - name: the part's name.
    ///   - fileName: its `filename`, nil when it has none.
    ///   - headers: its headers, in order.
    ///   - content: its raw bytes.
    ///   - charset: the charset its content is text in (an IANA name), nil when none was declared.
    public init(name: String, fileName: String?, headers: [ReceivedHeader], content: Data, charset: String? = nil) {
        self.name = name
        self.fileName = fileName
        self.headers = headers
        self.content = content
        self.charset = charset
    }

    /// The content as text: in ``charset`` when it names a charset this platform converts and
    /// the bytes are valid in it, else UTF-8, else ISO-8859-1.
    public var text: String { FormBodyParser.text(content, charset: charset) }

    /// The value of part header `name` (case-insensitive; the first one).
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value, or nil when the part has no such header.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// A value field.
public struct ParsedField: Sendable, Equatable, Codable {
    /// The field's name.
    public var name: String
    /// The field's value, read in the charset the body declared (``ParsedPart/charset``), else
    /// as UTF-8, else as ISO-8859-1.
    public var value: String

    /// A field `name` = `value`.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: the field's value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A file part.
public struct ParsedFile: Sendable, Equatable, Codable {
    /// The part's field name.
    public var name: String
    /// The `filename` parameter.
    public var fileName: String
    /// The part's `Content-Type`, if it had one.
    public var contentType: String?
    /// The content's size in bytes.
    public var size: Int
    /// The content's SHA-256, lowercase hex.
    public var sha256: String
    /// The content itself (not encoded to JSON).
    public var data: Data

    /// A file part; `size` and `sha256` are computed from `data`.
    /// - Parameters:
    ///   - name: the part's name.
    ///   - fileName: its `filename`.
    ///   - contentType: its `Content-Type`, nil when it has none.
    ///   - data: its bytes.
    public init(name: String, fileName: String, contentType: String?, data: Data) {
        self.name = name
        self.fileName = fileName
        self.contentType = contentType
        self.data = data
        self.size = data.count
        self.sha256 = SHA256.hex(data)
    }

    private enum CodingKeys: String, CodingKey {
        case name, fileName, contentType, size, sha256
    }

    /// Decodes the description of a part (its content is not in JSON, so ``data`` is empty).
    /// - Parameter decoder: the decoder.
    /// - Throws: `DecodingError` for a missing or mistyped key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        fileName = try container.decode(String.self, forKey: .fileName)
        contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
        size = try container.decode(Int.self, forKey: .size)
        sha256 = try container.decode(String.self, forKey: .sha256)
        data = Data()
    }

    /// Encodes the description of the part (name, file name, type, size, sha256).
    /// - Parameter encoder: the encoder.
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(fileName, forKey: .fileName)
        try container.encodeIfPresent(contentType, forKey: .contentType)
        try container.encode(size, forKey: .size)
        try container.encode(sha256, forKey: .sha256)
    }
}

/// Why a body could not be parsed, and where.
public struct FormParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset in the body where the problem was found.
    public var offset: Int
    /// What is wrong.
    public var reason: String

    /// An error at `offset`.
    /// - Parameters:
    ///   - offset: the byte offset in the body where parsing stopped.
    ///   - reason: what was wrong there.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// `reason (at byte N)`.
    public var description: String { "\(reason) (at byte \(offset))" }
}
