import Foundation

/// ASIHTTPRequest's redirect rules: the send driver follows redirects by them, whatever the
/// transport, and a transport declares the policy its sends use (``FormDataTransport/redirectPolicy``).
///
/// - 301, 302 and 303 become a `GET` without a body (`HEAD` stays `HEAD`), as ASIHTTPRequest
///   and browsers do; the body's `Content-Type` and `Content-Encoding` go with the body.
/// - 307 and 308 keep the method and send the whole body again.
/// - What goes to the new URL is the ``OriginRule``'s: another origin (scheme, host and port) gets
///   no credentials, cookies, `Authorization`, `Cookie`, `Proxy-Authorization` or fields marked
///   sensitive; a redirect from https to http, or to anything but http(s), is refused with
///   ``FormDataError/redirectRefused(from:to:reason:)``.
/// - More than ``maximumRedirects`` redirects fail with ``FormDataError/tooMuchRedirection(underlying:)``.
public struct RedirectPolicy: Sendable, Equatable {
    /// Redirects followed at most for one send (ASIHTTPRequest: 5).
    public var maximumRedirects: Int

    /// A policy that follows at most `maximumRedirects` redirects.
    /// - Parameter maximumRedirects: the most redirects one send follows (5, as ASIHTTPRequest).
    public init(maximumRedirects: Int = 5) {
        self.maximumRedirects = maximumRedirects
    }

    /// What to do with a response.
    public enum Decision: Sendable, Equatable {
        /// Not a redirect to follow: the response is the answer.
        case deliver
        /// Send this request next.
        case follow(TransportRequest)
        /// The redirect may not be followed.
        case refuse(FormDataError)
    }

    /// The response codes that redirect.
    public static let redirectCodes: Set<Int> = [301, 302, 303, 307, 308]

    /// Whether a response with `statusCode` and a `Location` is a redirect to follow.
    /// - Parameters:
    ///   - statusCode: the response's status.
    ///   - hasLocation: whether it has a `Location` header.
    /// - Returns: true for 301, 302, 303, 307 and 308 with a `Location`.
    public static func isRedirect(statusCode: Int, hasLocation: Bool) -> Bool {
        hasLocation && redirectCodes.contains(statusCode)
    }

    /// The decision for a response with `statusCode` and `location` (resolved against the URL of
    /// `request`) to `request`, after `redirectsSoFar` redirects.
    /// - Parameters:
    ///   - request: the request that was answered.
    ///   - statusCode: the response's status.
    ///   - location: where the response points, resolved against the request's URL; nil when none.
    ///   - redirectsSoFar: redirects already followed by this send.
    /// - Returns: deliver the response, follow with the next request, or refuse with an error.
    public func decide(
        after request: TransportRequest, statusCode: Int, location: URL?, redirectsSoFar: Int
    ) -> Decision {
        guard let location, Self.isRedirect(statusCode: statusCode, hasLocation: true) else { return .deliver }
        let from = request.url.absoluteString
        let to = location.absoluteString
        if case .refused(let reason) = OriginRule.judge(location, from: request.url) {
            return .refuse(.redirectRefused(from: from, to: to, reason: reason))
        }
        guard redirectsSoFar < maximumRedirects else {
            return .refuse(
                .tooMuchRedirection(
                    underlying: UnderlyingError(
                        domain: "FormDataKit", code: statusCode,
                        message: "More than \(maximumRedirects) redirects; the last pointed to \(to)")))
        }
        var next = request
        if statusCode == 301 || statusCode == 302 || statusCode == 303 {
            if request.method.uppercased() != "HEAD" { next.method = "GET" }
            next.body = .none
            next.headers.removeAll { Self.bodyHeaders.contains($0.name.lowercased()) }
        }
        return .follow(OriginRule.carry(next, to: location))
    }

    /// Headers that describe the body, dropped with it.
    static let bodyHeaders: Set<String> = ["content-type", "content-encoding", "content-length"]
    /// Whether `a` and `b` have the same scheme, host and port (default ports filled in).
    /// - Parameters:
    ///   - a: one URL.
    ///   - b: the other.
    /// - Returns: true when credentials for one may go to the other.
    @available(*, deprecated, renamed: "OriginRule.sameOrigin(_:_:)", message: "the origin rule lives in OriginRule")
    public static func sameOrigin(_ a: URL, _ b: URL) -> Bool { OriginRule.sameOrigin(a, b) }
}
