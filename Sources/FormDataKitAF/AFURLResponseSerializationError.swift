import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The error domain of response-validation errors: `com.alamofire.error.serialization.response`.
public let AFURLResponseSerializationErrorDomain = "com.alamofire.error.serialization.response"

/// The user-info key under which a validation error carries the failing `HTTPURLResponse`.
public let AFNetworkingOperationFailingURLResponseErrorKey = "com.alamofire.serialization.response.error.response"

/// The user-info key under which a validation error carries the response body (`Data`).
public let AFNetworkingOperationFailingURLResponseDataErrorKey = "com.alamofire.serialization.response.error.data"

/// Why a response failed validation (AFNetworking's `validateResponse:data:error:` errors, in
/// ``AFURLResponseSerializationErrorDomain``).
public enum AFURLResponseSerializationError: Error, Sendable {
    /// The status code is not acceptable (code -1011, "Request failed: not found (404)").
    /// `underlying` is the content-type error when that check failed too.
    case unacceptableStatusCode(Int, response: HTTPURLResponse, data: Data?, underlying: AFURLResponseSerializationErrorBox?)
    /// The MIME type is not acceptable (code -1016, "Request failed: unacceptable content-type: …").
    case unacceptableContentType(String, response: HTTPURLResponse, data: Data?)
}

/// A boxed ``AFURLResponseSerializationError`` (for the recursive underlying error).
public final class AFURLResponseSerializationErrorBox: Sendable {
    /// The boxed error.
    public let error: AFURLResponseSerializationError

    /// Boxes `error`.
    /// - Parameter error: the error to box.
    public init(_ error: AFURLResponseSerializationError) { self.error = error }
}

extension AFURLResponseSerializationError: CustomNSError, LocalizedError {
    /// ``AFURLResponseSerializationErrorDomain``.
    public static var errorDomain: String { AFURLResponseSerializationErrorDomain }

    /// -1011 (`NSURLErrorBadServerResponse`) for a status code, -1016
    /// (`NSURLErrorCannotDecodeContentData`) for a content type.
    public var errorCode: Int {
        switch self {
        case .unacceptableStatusCode: return URLError.Code.badServerResponse.rawValue
        case .unacceptableContentType: return URLError.Code.cannotDecodeContentData.rawValue
        }
    }

    /// AFNetworking's description, the failing URL, the response, its data and the underlying error.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: errorDescription ?? ""]
        let response: HTTPURLResponse
        let data: Data?
        switch self {
        case .unacceptableStatusCode(_, let r, let d, let underlying):
            response = r
            data = d
            if let underlying { info[NSUnderlyingErrorKey] = underlying.error as NSError }
        case .unacceptableContentType(_, let r, let d):
            response = r
            data = d
        }
        if let url = response.url { info[NSURLErrorFailingURLErrorKey] = url }
        info[AFNetworkingOperationFailingURLResponseErrorKey] = response
        if let data { info[AFNetworkingOperationFailingURLResponseDataErrorKey] = data }
        return info
    }

    /// "Request failed: <reason> (<code>)" or "Request failed: unacceptable content-type: <type>".
    public var errorDescription: String? {
        switch self {
        case .unacceptableStatusCode(let code, _, _, _):
            return "Request failed: \(HTTPURLResponse.localizedString(forStatusCode: code)) (\(code))"
        case .unacceptableContentType(let type, _, _):
            return "Request failed: unacceptable content-type: \(type)"
        }
    }

    /// The response that failed validation.
    public var response: HTTPURLResponse {
        switch self {
        case .unacceptableStatusCode(_, let response, _, _), .unacceptableContentType(_, let response, _): return response
        }
    }
}
