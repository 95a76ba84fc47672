import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A network failure as AFNetworking code checks it: an `NSURLErrorDomain` error
/// (`NSURLErrorTimedOut`, `NSURLErrorCancelled`, `NSURLErrorCannotConnectToHost`, …), whichever
/// transport sent the request. What ``AFHTTPSessionManager`` hands a failure block when sending
/// fails; errors of building the request keep their own types (`FormDataError`,
/// ``AFURLRequestSerializationError``), response validation its AF domain.
public struct AFNetworkError: Error, CustomNSError, LocalizedError, Sendable, Equatable, CustomStringConvertible {
    /// The `NSURLErrorDomain` code (`URLError.Code` raw value).
    public let code: Int
    /// The FormDataKit error the transport reported (typed; its own domain and code beneath).
    public let underlying: FormDataError

    /// The failure `error` means, or nil when it is not a network failure (a build error).
    /// - Parameter error: a sending error of FormDataKit.
    public init?(_ error: FormDataError) {
        guard let code = Self.urlErrorCode(for: error) else { return nil }
        self.code = code
        self.underlying = error
    }

    /// `NSURLErrorDomain`.
    public static var errorDomain: String { NSURLErrorDomain }
    /// ``code``.
    public var errorCode: Int { code }
    /// The description, and the FormDataKit error under `NSUnderlyingErrorKey`.
    public var errorUserInfo: [String: Any] {
        [NSLocalizedDescriptionKey: description, NSUnderlyingErrorKey: underlying as NSError]
    }
    /// As Foundation words these codes, with the transport's details.
    public var errorDescription: String? { description }
    /// The phrase for the code, then the transport's details in parentheses.
    public var description: String { "\(Self.phrase(for: code)) (\(underlying))" }

    /// What AF code is handed for `error`, by both façades (the session manager's tasks and the
    /// AF 2 operations): a sending failure or a cancel as an ``AFNetworkError``, any other error
    /// (a build error) as it is.
    static func reported(_ error: any Error) -> any Error {
        (error as? FormDataError).flatMap(AFNetworkError.init) ?? error
    }

    /// The `NSURLErrorDomain` code for a sending failure; nil for build errors.
    static func urlErrorCode(for error: FormDataError) -> Int? {
        switch error {
        case .timedOut: return URLError.Code.timedOut.rawValue
        case .cancelled: return URLError.Code.cancelled.rawValue
        case .authenticationNeeded: return URLError.Code.userAuthenticationRequired.rawValue
        case .tooMuchRedirection: return URLError.Code.httpTooManyRedirects.rawValue
        case .redirectRefused: return URLError.Code.redirectToNonExistentLocation.rawValue
        case .unableToCreateRequest: return URLError.Code.badURL.rawValue
        case .responseTooLarge: return URLError.Code.dataLengthExceedsMaximum.rawValue
        case .httpVersionNotNegotiated: return URLError.Code.cannotConnectToHost.rawValue
        case .connectionFailure(let underlying):
            if underlying.domain == NSURLErrorDomain { return underlying.code }
            guard underlying.domain == "libcurl" else { return URLError.Code.cannotConnectToHost.rawValue }
            switch underlying.code {
            case 5, 6: return URLError.Code.cannotFindHost.rawValue  // resolve proxy / host
            case 7: return URLError.Code.cannotConnectToHost.rawValue
            case 35: return URLError.Code.secureConnectionFailed.rawValue
            case 58: return URLError.Code.clientCertificateRejected.rawValue
            case 60, 90: return URLError.Code.serverCertificateUntrusted.rawValue  // verification, pin
            case 52, 55, 56: return URLError.Code.networkConnectionLost.rawValue  // empty reply, send, recv
            default: return URLError.Code.cannotConnectToHost.rawValue
            }
        default:
            return nil
        }
    }

    private static func phrase(for code: Int) -> String {
        switch URLError.Code(rawValue: code) {
        case .timedOut: return "The request timed out."
        case .cancelled: return "cancelled"
        case .cannotFindHost: return "A server with the specified hostname could not be found."
        case .cannotConnectToHost: return "Could not connect to the server."
        case .networkConnectionLost: return "The network connection was lost."
        case .secureConnectionFailed: return "An SSL error has occurred and a secure connection to the server cannot be made."
        case .serverCertificateUntrusted: return "The certificate for this server is invalid."
        case .clientCertificateRejected: return "The server did not accept the certificate."
        case .userAuthenticationRequired: return "The operation couldn't be completed (authentication required)."
        case .httpTooManyRedirects: return "too many HTTP redirects"
        case .badURL: return "unsupported URL"
        default: return "The operation couldn't be completed. (NSURLErrorDomain error \(code).)"
        }
    }
}
