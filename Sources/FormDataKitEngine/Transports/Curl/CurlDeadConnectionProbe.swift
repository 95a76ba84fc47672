import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

/// Closes the connections a multi handle keeps for reuse once their server closed its side,
/// within about two seconds, instead of leaving them in CLOSE-WAIT.
///
/// libcurl (7.88) closes dead idle connections (a readable idle socket: the server closed or
/// broke it) and those older than `CURLOPT_MAXAGE_CONN` only when a transfer looks for a
/// connection, at most once a second; an idle cache is never looked at. So about once a second,
/// while the multi handle may keep connections, the event loop's round adds this probe: a
/// transfer to a Unix socket path that cannot exist (under `/dev/null`), on a connection of its
/// own (`CONNECT_ONLY`), which fails at once — no name lookup, no network, no cached connection
/// touched — after libcurl has closed the dead ones. Live ones stay, except those idle past the
/// probe's `CURLOPT_MAXAGE_CONN` (libcurl's 118 s), which the next send would close anyway.
/// Owned by the loop's owner; no thread or timer of its own.
struct CurlDeadConnectionProbe {
    /// The probe's easy handle, made on first use.
    private var easy: UnsafeMutableRawPointer?
    /// Whether the probe is in the multi handle now.
    private var inMulti = false
    /// When the probe was last added.
    private var lastRun: ContinuousClock.Instant?
    /// The least time between two probes: libcurl looks at its cache at most once a second.
    static let interval: Duration = .seconds(1)
    /// Where the probe connects: a path under a character device, which no socket can have.
    static let unreachableSocketPath = "/dev/null/formdatakit-probe"
    /// The probe's URL: a host name no send uses (`.invalid`), so the probe never waits for a
    /// connection slot of a real host (``CurlTransport/Configuration/maximumConnectionsPerHost``);
    /// over a Unix socket, libcurl never looks it up.
    static let probeURL = "http://formdatakit-probe.invalid/"

    /// Adds the probe to `multi` when a second passed since the last (the next
    /// `curl_multi_perform` runs it); nothing while it is still there.
    /// - Parameters:
    ///   - multi: the loop's multi handle.
    ///   - now: the time now.
    mutating func runIfDue(in multi: UnsafeMutableRawPointer, now: ContinuousClock.Instant) {
        guard !inMulti else { return }
        if let lastRun, lastRun.duration(to: now) < Self.interval { return }
        lastRun = now
        if easy == nil { easy = Self.makeHandle() }
        guard let easy else { return }
        inMulti = ccurl_multi_add_handle(multi, easy) == 0
    }

    /// Takes the probe out of `multi` if `handle` is its (it ended: libcurl reports it done).
    /// - Parameters:
    ///   - handle: an easy handle libcurl reported done.
    ///   - multi: the loop's multi handle.
    /// - Returns: whether `handle` was the probe's.
    mutating func ended(_ handle: UnsafeMutableRawPointer, in multi: UnsafeMutableRawPointer) -> Bool {
        guard let easy, handle == easy else { return false }
        leave(multi)
        return true
    }

    /// Takes the probe out of `multi` (before the multi handle is replaced or cleaned up).
    /// - Parameter multi: the multi handle it may be in.
    mutating func leave(_ multi: UnsafeMutableRawPointer) {
        if inMulti, let easy { _ = ccurl_multi_remove_handle(multi, easy) }
        inMulti = false
    }

    /// Takes the probe out of `multi` and cleans its handle up (the loop stops).
    /// - Parameter multi: the multi handle it may be in.
    mutating func release(from multi: UnsafeMutableRawPointer) {
        leave(multi)
        if let easy { ccurl_easy_cleanup(easy) }
        easy = nil
    }

    /// An easy handle that fails at once without a name lookup or a packet: an HTTP URL over a
    /// Unix socket that cannot exist, on a connection of its own.
    private static func makeHandle() -> UnsafeMutableRawPointer? {
        guard let easy = ccurl_easy_init() else { return nil }
        var failed = false
        func check(_ code: Int32) { if code != CurlCode.ok { failed = true } }
        check(Self.probeURL.withCString { ccurl_easy_setopt_pointer(easy, CurlOption.url, $0) })
        check(unreachableSocketPath.withCString { ccurl_easy_setopt_pointer(easy, CurlOption.unixSocketPath, $0) })
        check(ccurl_easy_setopt_long(easy, CurlOption.connectOnly, 1))
        check(ccurl_easy_setopt_long(easy, CurlOption.freshConnect, 1))
        check(ccurl_easy_setopt_long(easy, CurlOption.noSignal, 1))
        guard !failed else {
            ccurl_easy_cleanup(easy)
            return nil
        }
        return easy
    }
}
