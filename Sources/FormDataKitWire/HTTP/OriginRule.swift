import Foundation

/// The one rule for a URL a server hands back — a redirect's `Location`, a resumable upload's
/// `104` or `201` `Location`, anything later: what may go there. The send driver applies it to
/// every such URL; nothing else decides it.
///
/// - A URL that is not http(s) with a host, or that would take a request from https to http, is
///   refused (``Verdict/refused(reason:)``).
/// - The same origin (scheme, host and port, default ports filled in) keeps everything.
/// - Another origin gets no credentials: no ``NetworkOptions/credentials``, no
///   ``NetworkOptions/requestCookies``, no `Authorization`, `Cookie` or `Proxy-Authorization`
///   field, and none of the caller's fields marked sensitive (``NetworkOptions/sensitiveHeaderNames``).
///   The transport's cookie jar applies RFC 6265's own rules to the new host.
/// - A resumable upload never moves to another origin: a `Location` there is disregarded and
///   the upload goes on as an ordinary one to the origin.
public enum OriginRule {
    /// How a URL a server named relates to the URL of the request it answered.
    public enum Verdict: Sendable, Equatable {
        /// Same scheme, host and port: everything may go there.
        case sameOrigin
        /// Another origin that may be visited, without credentials (``carry(_:to:)``).
        case otherOrigin
        /// Nothing may go there, for `reason`.
        case refused(reason: String)
    }

    /// The fields that always carry credentials for one origin (lowercased).
    public static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// How `target`, named by a server answering a request to `current`, relates to it.
    /// - Parameters:
    ///   - target: the URL the server named (already resolved against `current`).
    ///   - current: the URL of the request that was answered.
    /// - Returns: same origin, another origin, or refused with the reason.
    public static func judge(_ target: URL, from current: URL) -> Verdict {
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host?.isEmpty == false
        else { return .refused(reason: "only http and https URLs with a host are followed") }
        if current.scheme?.lowercased() == "https" && scheme == "http" {
            return .refused(reason: "a move from https to http would send the request unencrypted")
        }
        return sameOrigin(current, target) ? .sameOrigin : .otherOrigin
    }

    /// Whether `a` and `b` have the same scheme, host and port (default ports filled in).
    /// - Parameters:
    ///   - a: one URL.
    ///   - b: the other.
    /// - Returns: true when credentials for one may go to the other.
    public static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return (scheme, url.host?.lowercased() ?? "", port)
        }
        return origin(a) == origin(b)
    }

    /// `request` sent to `target` instead of its own URL, which ``judge(_:from:)`` did not refuse:
    /// unchanged but for the URL when `target` has the request's origin; otherwise without its
    /// credentials, request cookies, credential fields and sensitive fields.
    /// - Parameters:
    ///   - request: the request as it went to its own URL.
    ///   - target: where it goes next.
    /// - Returns: the request for `target`.
    public static func carry(_ request: TransportRequest, to target: URL) -> TransportRequest {
        var next = request
        next.url = target
        guard !sameOrigin(request.url, target) else { return next }
        next.headers.removeAll { isSensitive($0.name, in: request.network) }
        next.network.credentials = nil
        next.network.requestCookies = []
        return next
    }

    /// Whether a field named `name` carries credentials under `options`: a credential field, or
    /// one of the caller's sensitive fields (compared without regard to case).
    /// - Parameters:
    ///   - name: the field's name.
    ///   - options: the request's options (its ``NetworkOptions/sensitiveHeaderNames``).
    /// - Returns: true when the field must not go to another origin.
    public static func isSensitive(_ name: String, in options: NetworkOptions) -> Bool {
        credentialHeaders.contains(name.lowercased()) || options.sensitiveHeaderNames.contains { $0.equalsIgnoringASCIICase(name) }
    }
}
