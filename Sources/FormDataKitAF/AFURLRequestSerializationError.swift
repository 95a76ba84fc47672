import Foundation

/// The errors FormDataKitAF reports in ``AFURLRequestSerializationErrorDomain``.
///
/// The first four carry AFNetworking's codes and failure reasons; the rest are failures
/// AFNetworking did not detect (it asserted, crashed, or sent a wrong body). Errors from the
/// engine (a file that changed size, a string the encoding cannot represent) are
/// `FormDataError`s; errors thrown by a query-string block are passed through unchanged.
public enum AFURLRequestSerializationError: Error, Sendable, Equatable {
    /// `appendPart(withFileURL:…)` was given a URL that is not a `file:` URL (AF: -1000,
    /// "Expected URL to be a file URL").
    case notFileURL(URL)
    /// The file a file URL names does not exist (AF: -1000, "File URL not reachable.").
    case fileNotReachable(URL)
    /// The file URL names a directory (FormDataKit checks this when the part is appended; AF
    /// appended it and failed while sending).
    case fileIsDirectory(URL)
    /// JSON request parameters that `JSONSerialization` cannot encode (AF: -1016,
    /// "The `parameters` argument is not valid JSON.").
    case invalidJSONParameters
    /// A URL string (given, or made by appending a query) that is not a valid URL (AF asserted).
    case invalidURLString(String)
    /// A multipart request was asked for with method `GET` or `HEAD` (AF asserted).
    case multipartMethodNotAllowed(String)
    /// A boundary set with `multipartBoundary` that is not a valid RFC 2046 boundary.
    case invalidBoundary(String)
    /// An input-stream part declared a negative length.
    case invalidInputStreamLength(name: String, length: Int64)
    /// An input-stream part's stream ended after `read` of the `expected` bytes (AF sent a body
    /// shorter than its Content-Length).
    case inputStreamTooShort(name: String, expected: Int64, read: Int64)
    /// An input-stream part's stream had more bytes than the `expected` length given for it.
    case inputStreamTooLong(name: String, expected: Int64)
    /// An input-stream part's stream reported an error; `message` is its description.
    case inputStreamFailed(name: String, message: String)
    /// `request(withMultipartForm:writingStreamContentsToFile:…)` was given a request whose body
    /// is not a FormDataKitAF multipart body stream.
    case notMultipartRequest
}

extension AFURLRequestSerializationError: CustomNSError, LocalizedError {
    /// ``AFURLRequestSerializationErrorDomain``.
    public static var errorDomain: String { AFURLRequestSerializationErrorDomain }

    /// The `NSURLError…` code AFNetworking used for this kind of failure.
    public var errorCode: Int {
        switch self {
        case .notFileURL, .fileNotReachable, .fileIsDirectory, .invalidURLString, .invalidBoundary:
            return URLError.Code.badURL.rawValue
        case .invalidJSONParameters:
            return URLError.Code.cannotDecodeContentData.rawValue
        case .multipartMethodNotAllowed:
            return URLError.Code.unsupportedURL.rawValue
        case .invalidInputStreamLength, .inputStreamTooShort, .inputStreamTooLong, .inputStreamFailed,
            .notMultipartRequest:
            return URLError.Code.requestBodyStreamExhausted.rawValue
        }
    }

    /// The failure reason, under `NSLocalizedFailureReasonErrorKey` as AFNetworking stored it,
    /// plus the failing URL where there is one.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedFailureReasonErrorKey: failureReasonText]
        switch self {
        case .notFileURL(let url), .fileNotReachable(let url), .fileIsDirectory(let url):
            info[NSURLErrorFailingURLErrorKey] = url
        default:
            break
        }
        return info
    }

    /// The failure reason (AFNetworking's exact text for its own cases).
    public var failureReason: String? { failureReasonText }

    /// A sentence naming what failed.
    public var errorDescription: String? {
        switch self {
        case .notFileURL(let url): return "Expected URL to be a file URL: \(url.absoluteString)"
        case .fileNotReachable(let url): return "File URL not reachable: \(url.path)"
        case .fileIsDirectory(let url): return "File URL is a directory: \(url.path)"
        case .invalidJSONParameters: return "The `parameters` argument is not valid JSON."
        case .invalidURLString(let string): return "Not a valid URL: \(string.debugDescription)"
        case .multipartMethodNotAllowed(let method):
            return "A multipart request cannot use the method \(method)"
        case .invalidBoundary(let boundary):
            return "Not a valid multipart boundary: \(boundary.debugDescription)"
        case .invalidInputStreamLength(let name, let length):
            return "The input stream for part '\(name)' has a negative length (\(length))"
        case .inputStreamTooShort(let name, let expected, let read):
            return "The input stream for part '\(name)' ended after \(read) of \(expected) bytes"
        case .inputStreamTooLong(let name, let expected):
            return "The input stream for part '\(name)' has more than the \(expected) bytes given as its length"
        case .inputStreamFailed(let name, let message):
            return "The input stream for part '\(name)' failed: \(message)"
        case .notMultipartRequest:
            return "The request's body is not a FormDataKitAF multipart body stream"
        }
    }

    private var failureReasonText: String {
        switch self {
        case .notFileURL: return "Expected URL to be a file URL"
        case .fileNotReachable: return "File URL not reachable."
        case .fileIsDirectory: return "File URL is a directory."
        case .invalidJSONParameters: return "The `parameters` argument is not valid JSON."
        default: return errorDescription ?? ""
        }
    }
}
