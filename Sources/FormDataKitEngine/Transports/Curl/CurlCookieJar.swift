import FormDataKitBody
import FormDataKitWire
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
///
/// A jar file is read and written on the reader pool, never on the transport's thread (a file
/// system may wait: NFS, FUSE, a FIFO put in the file's place): ``CurlTransport`` reads it before
/// the first send that uses it starts, and ``CurlEventLoop`` writes it before a send whose
/// responses set cookies completes.
final class CurlCookieJar: @unchecked Sendable {
    // `@unchecked`: the handle is set once; libcurl locks the shared data itself; the counters
    // are guarded by `lock`, the file's reads and writes (and `preparedFile`) by `fileLock`,
    // which the transport's thread never takes.
    private let owner: UnsafeMutableRawPointer?
    /// The most cookies kept for one domain, and in all.
    let limits: CookieJarEviction.Limits
    private let lock = Locked()
    /// Cookies in the jar at its last check, and `Set-Cookie` lines received since.
    private var countAtLastCheck = 0
    private var setSinceLastCheck = 0
    private let fileLock = Locked()
    private var preparedFile: String?
    /// The file read into the jar, once that read is done.
    private let loadedFile = Locked<String?>(nil)

    /// A new, empty jar (nil handle when libcurl could not make one: cookies are then not kept).
    /// - Parameter limits: the most cookies kept for one domain and in all.
    init(limits: CookieJarEviction.Limits) {
        self.limits = limits
        owner = ccurl_cookie_share_create()
    }

    deinit { if let owner { _ = ccurl_cookie_share_destroy(owner) } }

    /// The share handle for `CURLOPT_SHARE`.
    var shareHandle: UnsafeMutableRawPointer? { owner.flatMap { ccurl_cookie_share_handle($0) } }

    /// Whether `path` still has to be read into the jar (``loadFileOnce(_:)``).
    func needsLoading(_ path: String) -> Bool { loadedFile.current != path }

    /// Reads `path` (a Netscape cookie file) into the jar, once per jar, before the first transfer
    /// that uses it; on the reader pool. The file is read here and its lines given to libcurl one by
    /// one (`CURLOPT_COOKIELIST`): libcurl's own load would hold the jar's lock, which transfers on
    /// the transport's thread take, while the file system waits.
    /// - Throws: for a path that exists but is not a readable regular file, the error naming it
    ///   (``CookieFile/read(_:)``); the jar stays unread, and the next send tries again.
    func loadFileOnce(_ path: String) throws(FormDataError) {
        var failure: FormDataError?
        fileLock.withLock {
            guard preparedFile != path else { return }
            let text: String?
            do throws(FormDataError) { text = try CookieFile.read(path) } catch {
                failure = error
                return
            }
            preparedFile = path
            guard let text, let easy = maintenanceHandle() else { return }
            defer { ccurl_easy_cleanup(easy) }
            for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") || line.hasPrefix("#HttpOnly_") {
                _ = String(line).withCString { ccurl_easy_setopt_pointer(easy, CurlOption.cookieList, $0) }
            }
        }
        if let failure { throw failure }
        loadedFile.withLock { $0 = path }
    }

    /// Writes the jar to `path`, before the send whose responses changed it completes. A file
    /// that does not exist yet is made readable by its owner only (0600; libcurl would make it
    /// with the process's umask, 0644 as a rule); an existing file keeps its mode.
    ///
    /// The jar's lines are copied out first (`CURLINFO_COOKIELIST`, the lock held only for that),
    /// then written here (``CookieFile``): libcurl's own write holds the lock while the file is written.
    private func write(to path: String) {
        fileLock.withLock {
            guard let easy = maintenanceHandle() else { return }
            let lines = Self.cookieLines(easy: easy)
            ccurl_easy_cleanup(easy)
            CookieFile.write(lines, to: path)
        }
    }

    /// After a transfer whose responses carried `setCookieLines` `Set-Cookie` lines ended:
    /// checks the jar when it may be over a limit, then writes it to `file`, if any. On the
    /// event loop's thread without a file; with one on the reader pool (the write may wait).
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

/// The jar's check and its file's write after a transfer whose responses set cookies (on the
/// reader pool: the write may wait on the file's file system).
struct CookieJarFileWrite: Sendable {
    let jar: CurlCookieJar
    let setCookieLines: Int
    let file: String

    func run() { jar.transferEnded(setCookieLines: setCookieLines, file: file) }
}
