import Foundation

/// Every error FormDataKit throws or reports.
///
/// Each case carries what a user needs to act on it: the file path, the field name, the
/// string encoding, or the underlying system error number (`errno`).
public enum FormDataError: Error, Sendable, Equatable {
    /// The part of a field a string came from, for ``unencodableString(field:role:encoding:)``.
    public enum FieldRole: String, Sendable, Equatable {
        /// The field's name (its key).
        case name
        /// A value field's value.
        case value
        /// A file field's file name.
        case fileName
        /// A file field's content type.
        case contentType
    }

    /// No file exists at `path` (raised by `addFile`/`setFile`, or when the body is built).
    case fileNotFound(path: String)
    /// `path` names a directory, not a file.
    case fileIsDirectory(path: String)
    /// The file at `path` exists but could not be opened or read; `errno` says why.
    case fileUnreadable(path: String, errno: Int32)
    /// The file at `path` changed size after the body length was computed. Nothing was sent
    /// with a wrong length; rebuild the body to pick up the new contents.
    case fileChanged(path: String, expectedSize: UInt64, actualSize: UInt64)
    /// A string in field `field` cannot be represented in `encoding` (ASIHTTPRequest silently
    /// dropped such strings; FormDataKit refuses to build a wrong body).
    case unencodableString(field: String, role: FieldRole, encoding: String.Encoding)
    /// `encoding` is not usable for form bodies (it is not ASCII-compatible, e.g. UTF-16).
    case unsupportedEncoding(String.Encoding)
    /// A header value for field `field` contains CR, LF or NUL and would break the part headers.
    case invalidHeaderValue(field: String, value: String)
    /// The multipart boundary you set occurs inside the content of field `field`.
    /// (A generated boundary is regenerated instead.)
    case boundaryCollision(boundary: String, field: String)
    /// A temporary file could not be created, written, or removed. `operation` names the step.
    case temporaryFileFailed(path: String, operation: String, errno: Int32)
    /// zlib reported `code` while compressing (`message` is zlib's own text when it gave one).
    case compressionFailed(code: Int32, message: String)
    /// zlib reported `code` while decompressing, or the compressed data is corrupt or truncated.
    case decompressionFailed(code: Int32, message: String)
    /// Decompressed data grew past `limit` bytes (a decompression bomb, or a limit set too low).
    /// Nothing past the limit was produced.
    case decompressedSizeLimitExceeded(limit: UInt64)
    /// The file at `path` (a destination the caller named) could not be created, written or put
    /// in place; `errno` says why. No partial file is left at `path`.
    case fileUnwritable(path: String, errno: Int32)
}

extension FormDataError: LocalizedError, CustomStringConvertible {
    public var errorDescription: String? { description }

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "No file exists at \(path)"
        case .fileIsDirectory(let path):
            return "The path \(path) is a directory, not a file"
        case .fileUnreadable(let path, let code):
            return "The file at \(path) could not be read: \(Self.systemMessage(code))"
        case .fileChanged(let path, let expected, let actual):
            return "The file at \(path) changed size from \(expected) to \(actual) bytes after the body length was computed"
        case .unencodableString(let field, let role, let encoding):
            return "The \(role.rawValue) of field '\(field)' cannot be represented in \(IANACharset.name(for: encoding) ?? "\(encoding)")"
        case .unsupportedEncoding(let encoding):
            return "The string encoding \(encoding) is not ASCII-compatible and cannot be used for form bodies"
        case .invalidHeaderValue(let field, let value):
            return "The header value \(value.debugDescription) for field '\(field)' contains CR, LF or NUL"
        case .boundaryCollision(let boundary, let field):
            return "The multipart boundary \(boundary) occurs in the content of field '\(field)'"
        case .temporaryFileFailed(let path, let operation, let code):
            return "Temporary file \(path): \(operation) failed: \(Self.systemMessage(code))"
        case .compressionFailed(let code, let message):
            return "Compression of data failed with code \(code)\(message.isEmpty ? "" : " (\(message))")"
        case .decompressionFailed(let code, let message):
            return "Decompression of data failed with code \(code)\(message.isEmpty ? "" : " (\(message))")"
        case .decompressedSizeLimitExceeded(let limit):
            return "Decompressed data exceeds the limit of \(limit) bytes"
        case .fileUnwritable(let path, let code):
            return "The file at \(path) could not be written: \(Self.systemMessage(code))"
        }
    }

    /// The C library's text for an `errno` value.
    static func systemMessage(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}
