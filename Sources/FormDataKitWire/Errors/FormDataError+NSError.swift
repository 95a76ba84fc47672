import Foundation

/// ``FormDataError`` as ported code checks it: `error.domain == ASIHTTPRequestErrorDomain`,
/// `error.code` one of ASI's `ASINetworkErrorType` numbers, `localizedDescription` ASI's text.
extension FormDataError: CustomNSError {
    /// ASIHTTPRequest's `NetworkRequestErrorDomain`: `"ASIHTTPRequestErrorDomain"`.
    public static let asiErrorDomain = "ASIHTTPRequestErrorDomain"

    /// ``asiErrorDomain``.
    public static var errorDomain: String { asiErrorDomain }

    /// ``asiErrorCode`` (1 connection failure, 2 timed out, 3 authentication, 4 cancelled,
    /// 5 unable to create request, 6 build, 8 file management, 9 redirection, 11 compression).
    public var errorCode: Int { asiErrorCode }

    /// `NSLocalizedDescriptionKey`: ASIHTTPRequest's description for sending errors ("A connection
    /// failure occurred", "The request timed out", "Authentication needed", "The request was
    /// cancelled", "Unable to create request (bad url?)", "The request failed because it
    /// redirected too many times"), this error's own description for the others;
    /// `NSUnderlyingErrorKey`: the underlying error (transport, build or file error) as an `NSError`;
    /// `NSLocalizedFailureReasonErrorKey`: the full description with its details.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: asiDescription, NSLocalizedFailureReasonErrorKey: description]
        if let underlying = underlyingNSError { info[NSUnderlyingErrorKey] = underlying }
        return info
    }

    /// ASIHTTPRequest's text for this error's category (the first line of its `NSError`).
    public var asiDescription: String {
        switch self {
        case .connectionFailure, .responseTooLarge, .httpVersionNotNegotiated: return "A connection failure occurred"
        case .timedOut: return "The request timed out"
        case .authenticationNeeded: return "Authentication needed"
        case .cancelled: return "The request was cancelled"
        case .unableToCreateRequest: return "Unable to create request (bad url?)"
        case .tooMuchRedirection: return "The request failed because it redirected too many times"
        default: return description
        }
    }

    /// The error beneath this one, as an `NSError`: a transport's error with its own domain and
    /// code, or the wrapped FormDataKit error.
    private var underlyingNSError: NSError? {
        switch self {
        case .connectionFailure(let underlying), .timedOut(let underlying), .authenticationNeeded(let underlying),
            .unableToCreateRequest(let underlying), .tooMuchRedirection(let underlying):
            return NSError(
                domain: underlying.domain, code: underlying.code,
                userInfo: [NSLocalizedDescriptionKey: underlying.message])
        case .internalErrorWhileBuilding(let wrapped), .fileManagement(let wrapped), .compression(let wrapped):
            return wrapped as NSError
        default:
            return nil
        }
    }
}
