import CCurl

/// One transport's cookie jar: a libcurl share handle sharing cookies between the transport's
/// easy handles (with its own locks, so a handle may be released on any thread). Every transfer
/// that uses it keeps it alive, so it is released after the last of them.
final class CurlCookieJar: @unchecked Sendable {
    // `@unchecked`: the handle is set once; libcurl locks the shared data itself.
    private let owner: UnsafeMutableRawPointer?

    /// A new, empty jar (nil handle when libcurl could not make one: cookies are then not kept).
    init() { owner = ccurl_cookie_share_create() }

    deinit { if let owner { _ = ccurl_cookie_share_destroy(owner) } }

    /// The share handle for `CURLOPT_SHARE`.
    var shareHandle: UnsafeMutableRawPointer? { owner.flatMap { ccurl_cookie_share_handle($0) } }
}
