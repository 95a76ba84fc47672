import CCurl
import Foundation

/// One transport's cookie jar: a libcurl share handle sharing cookies between the transport's
/// easy handles (with its own locks, so a handle may be released on any thread). Every transfer
/// that uses it keeps it alive, so it is released after the last of them.
///
/// libcurl's jar has no size limit of its own, so this one keeps it bounded: after a response that
/// set cookies, once the jar may hold more than a domain's limit, it lists the jar and expires
/// what ``CookieJarEviction`` picks (the oldest cookies of a domain over its limit, then of the
/// domains holding the most, while the jar is over its total).
final class CurlCookieJar: @unchecked Sendable {
    // `@unchecked`: the handle is set once; libcurl locks the shared data itself; the counters
    // are guarded by `lock`.
    private let owner: UnsafeMutableRawPointer?
    /// The most cookies kept for one domain, and in all.
    let limits: CookieJarEviction.Limits
    private let lock = Locked()
    /// Cookies in the jar at its last check, and `Set-Cookie` lines received since.
    private var countAtLastCheck = 0
    private var setSinceLastCheck = 0
    private var preparedFile: String?

    /// A new, empty jar (nil handle when libcurl could not make one: cookies are then not kept).
    /// - Parameter limits: the most cookies kept for one domain and in all.
    init(limits: CookieJarEviction.Limits) {
        self.limits = limits
        owner = ccurl_cookie_share_create()
    }

    deinit { if let owner { _ = ccurl_cookie_share_destroy(owner) } }

    /// The share handle for `CURLOPT_SHARE`.
    var shareHandle: UnsafeMutableRawPointer? { owner.flatMap { ccurl_cookie_share_handle($0) } }

    /// Reads `path` (a Netscape cookie file) into the jar, once per jar: before the first
    /// transfer that uses it (later ones only switch libcurl's cookie engine on).
    func loadFileOnce(_ path: String) {
        lock.withLock {
            guard preparedFile != path else { return }
            preparedFile = path
            guard let easy = maintenanceHandle() else { return }
            defer { ccurl_easy_cleanup(easy) }
            _ = path.withCString { ccurl_easy_setopt_pointer(easy, CurlOption.cookieFile, $0) }
            _ = "RELOAD".withCString { ccurl_easy_setopt_pointer(easy, CurlOption.cookieList, $0) }
        }
    }

    /// Writes the jar to `path`, before the send whose responses changed it completes. A file
    /// that does not exist yet is created empty and readable by its owner only (0600) first:
    /// libcurl then keeps that mode when it replaces the file (it would create a new one with
    /// the process's umask, 0644 as a rule). An existing file keeps its mode.
    private func write(to path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) }
        guard let easy = maintenanceHandle() else { return }
        _ = path.withCString { ccurl_easy_setopt_pointer(easy, CurlOption.cookieJar, $0) }
        ccurl_easy_cleanup(easy)  // libcurl writes the jar file here
    }

    /// After a transfer whose responses carried `setCookieLines` `Set-Cookie` lines ended:
    /// checks the jar when it may be over a limit, then writes it to `file`, if any. On the
    /// event loop's thread.
    func transferEnded(setCookieLines: Int, file: String?) {
        guard setCookieLines > 0 else { return }
        let due = lock.withLock { () -> Bool in
            setSinceLastCheck += setCookieLines
            return countAtLastCheck + setSinceLastCheck > min(limits.perDomain, limits.total)
        }
        if due { enforceLimits() }
        if let file { write(to: file) }
    }

    /// Lists the jar and expires what is over its limits, through an easy handle of its own: on
    /// the handle of a transfer whose response set 50 cookies, libcurl refuses every further
    /// cookie for that request (its `MAX_SET_COOKIE_AMOUNT`), expired ones included.
    private func enforceLimits() {
        guard let easy = maintenanceHandle() else { return }
        defer { ccurl_easy_cleanup(easy) }
        let lines = Self.cookieLines(easy: easy)
        let evicted = CookieJarEviction.linesToEvict(lines, limits: limits)
        for index in evicted {
            guard let expired = CookieJarEviction.expiredLine(lines[index]) else { continue }
            _ = expired.withCString { ccurl_easy_setopt_pointer(easy, CurlOption.cookieList, $0) }
        }
        lock.withLock {
            countAtLastCheck = lines.count - evicted.count
            setSinceLastCheck = 0
        }
    }

    /// How many cookies the jar holds now (expired ones, which libcurl drops at its next change,
    /// not counted).
    var count: Int {
        guard let easy = maintenanceHandle() else { return 0 }
        defer { ccurl_easy_cleanup(easy) }
        let now = Int(Date().timeIntervalSince1970)
        return Self.cookieLines(easy: easy).count { !CookieJarEviction.hasExpired($0, now: now) }
    }

    /// A new easy handle on this jar, for listing and changing it outside a transfer.
    private func maintenanceHandle() -> UnsafeMutableRawPointer? {
        guard let share = shareHandle, let easy = ccurl_easy_init() else { return nil }
        _ = ccurl_easy_setopt_pointer(easy, CurlOption.share, share)
        return easy
    }

    /// The jar's cookies as Netscape cookie-file lines, in the jar's order.
    static func cookieLines(easy: UnsafeMutableRawPointer) -> [Substring] {
        guard let text = ccurl_easy_cookie_lines(easy) else { return [] }
        defer { ccurl_free(text) }
        return String(cString: text).split(separator: "\n")
    }
}
