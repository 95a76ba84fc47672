import FormDataKit

/// Why a ``FormSnapshot`` (or a ``RawHTTPRequest``) could not be made.
public enum FormSnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file could not be read.
    case unreadable(path: String, reason: String)
    /// A raw HTTP request capture is malformed (the offset is in the capture file).
    case malformedCapture(path: String?, FormParseError)
    /// The body is not what its headers say: bad multipart framing, bad escape, wrong
    /// `Content-Length`, corrupt gzip (the offset is in the body; after inflation for form errors).
    case malformedBody(FormParseError)
    /// Building the ``FormDataRequest``'s body failed.
    case buildFailed(FormDataError)
    /// The `URLRequest`'s body stream failed while it was read.
    case streamFailed(reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "Cannot read \(path): \(reason)"
        case .malformedCapture(let path, let error): return "Malformed capture\(path.map { " \($0)" } ?? ""): \(error)"
        case .malformedBody(let error): return "Malformed body: \(error)"
        case .buildFailed(let error): return "Building the body failed: \(error)"
        case .streamFailed(let reason): return "Reading the body stream failed: \(reason)"
        }
    }
}
