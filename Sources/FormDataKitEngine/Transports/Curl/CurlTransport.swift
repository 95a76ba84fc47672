import FormDataKitBody
import FormDataKitWire
import Foundation

/// Sends requests with the system libcurl: the default transport on Linux.
///
/// - The body streams from its parts (``streamsBodySource`` is true): libcurl's read callback
///   fills its upload buffer straight from the `BodySource` — literal bytes and file ranges —
///   with the exact `Content-Length`, never chunked, no spool, no temporary file, memory bounded
///   by one upload buffer per send, its files read ahead on the reader pool (never on the
///   transport's thread).
///   A file whose size changed fails the send with
///   `FormDataError.fileChanged(path:expectedSize:actualSize:)` (inside
///   `FormDataError.internalErrorWhileBuilding(underlying:)`) and the body is cut short, so
///   no wrong body is ever complete.
/// - No `Expect: 100-continue` (as ASIHTTPRequest): a server that never answers it would cost a
///   second per request. ``Configuration/sendsExpectContinue`` turns it on.
/// - Progress counts body bytes on the wire; it ends at exactly the body length.
/// - One exchange per ``start(_:observer:)``: the send driver times sends out (ASIHTTPRequest's
///   idle `timeOutSeconds`), follows redirects (``redirectPolicy``) and answers a challenge by
///   starting another exchange.
/// - Cancelling takes the transfer out of libcurl at once; the exchange finishes with
///   `FormDataError.cancelled`. Nothing of the process is at risk, whatever point the body
///   had reached.
/// - Responses: content encodings libcurl knows (gzip, deflate…) are decoded as the body
///   arrives and handed on; the server's reason phrase is kept.
///
/// One transport owns one libcurl multi handle driven by one thread, started on first use: sends
/// run side by side and never wait for one another; connections are reused across sends to the
/// same host. Keep one transport (``shared``) for the life of the process, or create one per
/// component; a transport stops its thread when released and no send is in flight.
///
/// libcurl is bound at run time (`libcurl.so.4` on Linux, which FoundationNetworking needs too),
/// so no development package is needed to build. Where it cannot be loaded, ``isAvailable`` is
/// false and `FormDataRequest.defaultTransport` falls back to ``URLSessionTransport``.
public final class CurlTransport: FormDataTransport, CallerDrivenTransport {
    /// How a transport sends.
    public struct Configuration: Sendable, Equatable {
        /// Seconds allowed to connect (and finish a TLS handshake); 0 leaves libcurl's default
        /// (300 s). 30 by default. The request's idle timeout applies while connecting too.
        public var connectTimeout: TimeInterval
        /// Whether 3xx responses with a `Location` are followed (ASIHTTPRequest's
        /// `shouldRedirect`); true by default.
        public var followsRedirects: Bool
        /// Redirects followed at most for one send; 5 by default (ASIHTTPRequest's limit).
        public var maximumRedirects: Int
        /// Whether a body goes out with `Expect: 100-continue` (libcurl's default for bodies over
        /// 1 MiB); false by default, as ASIHTTPRequest sent none.
        public var sendsExpectContinue: Bool
        /// Connections at most per host (0: no limit; further sends wait for a free one).
        public var maximumConnectionsPerHost: Int
        /// The largest libcurl upload buffer of a send, in bytes: 512 KiB by default (0: libcurl's
        /// own 64 KiB for every send). A send gets a quarter of its body's length, and at most
        /// a fair share of four such buffers among the sends in flight, at least 64 KiB and at
        /// most this: a few uploads get large buffers, many at once stay small in memory. A small
        /// body (up to 128 KiB) gets room for all of it within that share, so
        /// libcurl sends it after the head in one piece.
        /// Measured (`formdata-bench send concurrent queue`): a 1 GiB body goes out in under half
        /// the time and CPU with 512 KiB than with 64 KiB; 200 concurrent 1 MiB uploads with
        /// 512 KiB each peaked at 140 MiB RSS against 53 MiB with 64 KiB; 200 × 1 MiB, 8 at a
        /// time, took 0.30 s with 256 KiB each against 0.42 s with 64 KiB.
        public var uploadBufferSize: Int
        /// Which server certificates are trusted: nil (the default) is the system's trust store
        /// with full verification; with certificates, they are the only trust anchors (a pinned
        /// self-signed certificate, or "only this CA"). See `TrustAnchorPinning`.
        public var trust: TrustAnchorPinning?
        /// A file the cookie jar is read from (when it exists) and written to after each send
        /// (Netscape cookie-file format, as `curl --cookie-jar`); nil (the default): in memory only.
        public var cookieJarFile: String?
        /// The most cookies the jar keeps for one domain; 180 by default (as Chrome and Firefox).
        /// Past it, the domain's oldest cookies are dropped.
        public var maximumCookiesPerDomain: Int
        /// The most cookies the jar keeps in all; 3,000 by default (RFC 6265's minimum, Firefox's
        /// limit). Past it, the oldest cookies of the domains holding the most are dropped.
        public var maximumCookies: Int
        /// The most connections kept open for reuse once their sends ended (libcurl's
        /// `CURLMOPT_MAXCONNECTS`); 64 by default. Past it, the longest-unused one is closed. Raise
        /// it when more than this many sends run at once to the same servers, or they reconnect.
        public var maximumIdleConnections: Int
        /// Seconds the transport may sit with no send in flight before it closes every connection
        /// it kept for reuse; 30 by default (0: kept until the transport is released). Whatever
        /// it is, a kept connection that its server closed is closed within about two seconds
        /// (instead of sitting in CLOSE-WAIT), and one idle for longer than libcurl's 118 s
        /// (`CURLOPT_MAXAGE_CONN`, as libcurl closes those at the next send anyway); the others stay
        /// for reuse.
        public var idleConnectionTimeout: TimeInterval
        /// Seconds a thread in `FormDataRequest.startSynchronous()` that runs this transport's
        /// loop checks its sockets without sleeping, once its request is on the wire, before it
        /// sleeps until the answer: 0.0002 (200 µs) by default; 0: it sleeps at once. An answer
        /// within that time (a server on the same machine or the same LAN) is taken without a sleep
        /// and a wake-up, which on a virtual machine can take as long as the answer. Spins that
        /// find nothing make the following waits sleep at once (up to 64 of them), so a slower
        /// server costs one spin in 64 waits. With one processor it never spins (a server on the
        /// same machine would need it to answer). Measured (`formdata-bench --compare-with <the
        /// build before> w7`, 3,000 small forms one at a time to a loopback server, same run):
        /// 0.653 s with it against 0.820 s without.
        public var synchronousSpinInterval: TimeInterval
        /// The most HTTP/2 streams (sends) one connection carries at once; 100 by default
        /// (libcurl's `CURLMOPT_MAX_CONCURRENT_STREAMS`; the server's own limit, when lower, wins).
        /// Sends past it wait for a stream or open another connection.
        public var maximumStreamsPerConnection: Int

        /// A configuration; every argument has the default described on its property.
        /// - Parameters:
        ///   - connectTimeout: seconds to connect before a connection failure (30).
        ///   - followsRedirects: whether redirects are followed, ASIHTTPRequest's way (true).
        ///   - maximumRedirects: how many redirects before `FormDataError.tooMuchRedirection(underlying:)` (5).
        ///   - sendsExpectContinue: whether bodies wait for `100 Continue` (false, as ASIHTTPRequest).
        ///   - maximumConnectionsPerHost: the most connections to one host at once; 0: no limit.
        ///   - uploadBufferSize: the largest upload buffer of a send (512 KiB; a send gets a quarter of
        ///     its body, or all of a small body, between 64 KiB and this).
        ///   - trust: the trust anchors every send of this transport uses, nil for the system's.
        ///   - cookieJarFile: a file the transport's cookie jar is read from and written to, nil for none.
        ///   - maximumCookiesPerDomain: the most cookies kept for one domain (180).
        ///   - maximumCookies: the most cookies kept in all (3,000).
        ///   - maximumIdleConnections: the most connections kept open for reuse (64).
        ///   - idleConnectionTimeout: seconds with no send before kept connections are closed (30; 0: never).
        ///   - synchronousSpinInterval: seconds a synchronous send checks for its answer before it
        ///     sleeps (0.0002; 0: never).
        ///   - maximumStreamsPerConnection: the most HTTP/2 streams on one connection at once (100).
        public init(
            connectTimeout: TimeInterval = 30, followsRedirects: Bool = true, maximumRedirects: Int = 5,
            sendsExpectContinue: Bool = false, maximumConnectionsPerHost: Int = 0, uploadBufferSize: Int = 512 << 10,
            trust: TrustAnchorPinning? = nil, cookieJarFile: String? = nil, maximumCookiesPerDomain: Int = 180,
            maximumCookies: Int = 3000, maximumIdleConnections: Int = 64, idleConnectionTimeout: TimeInterval = 30,
            synchronousSpinInterval: TimeInterval = 0.0002, maximumStreamsPerConnection: Int = 100
        ) {
            self.synchronousSpinInterval = synchronousSpinInterval
            self.maximumStreamsPerConnection = max(1, maximumStreamsPerConnection)
            self.trust = trust
            self.cookieJarFile = cookieJarFile
            self.maximumCookiesPerDomain = max(0, maximumCookiesPerDomain)
            self.maximumCookies = max(0, maximumCookies)
            self.maximumIdleConnections = max(0, maximumIdleConnections)
            self.idleConnectionTimeout = max(0, idleConnectionTimeout)
            self.connectTimeout = connectTimeout
            self.followsRedirects = followsRedirects
            self.maximumRedirects = max(0, maximumRedirects)
            self.sendsExpectContinue = sendsExpectContinue
            self.maximumConnectionsPerHost = max(0, maximumConnectionsPerHost)
            self.uploadBufferSize = max(0, uploadBufferSize)
        }
    }

    /// The spin of ``Configuration/synchronousSpinInterval`` in nanoseconds: at most a second;
    /// 0 for 0, a negative value or NaN, and on a machine with one processor.
    static func nanoseconds(spinning seconds: TimeInterval, processors: Int = ProcessInfo.processInfo.activeProcessorCount) -> UInt64 {
        seconds.isFinite && seconds > 0 && processors > 1 ? UInt64(min(seconds, 1) * 1e9) : 0
    }

    /// The process's transport with default settings, created on first use (its thread starts
    /// with the first send) and never released.
    public static let shared = CurlTransport()

    /// Whether libcurl could be loaded on this machine.
    public static var isAvailable: Bool { CurlLibrary.isAvailable }

    /// Why libcurl could not be loaded, or nil when it was.
    public static var unavailableReason: String? { CurlLibrary.loadError }

    /// libcurl's version text (e.g. `libcurl/7.88.1 OpenSSL/3.0.19 …`), or nil when unavailable.
    public static var libraryVersion: String? { CurlLibrary.version }

    /// The settings the transport was created with.
    public let configuration: Configuration
    let eventLoop: CurlEventLoop
    /// The transport's cookie jar (nil when libcurl is missing): one per transport instance.
    let cookieJar: CurlCookieJar?
    /// Where its bodies' files are opened and closed (on the reader pool): the system's, or a
    /// test's file system that waits.
    let files: any FileOpening

    /// A transport with its own libcurl multi handle and thread (started by the first send).
    /// - Parameter configuration: timeouts, redirects, connection limits, trust and cookie jar file.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, files: SystemFileOpening())
    }

    /// A transport whose bodies' files `files` opens and closes.
    init(configuration: Configuration = Configuration(), files: any FileOpening) {
        self.configuration = configuration
        self.files = files
        self.eventLoop = CurlEventLoop(
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
            maximumIdleConnections: configuration.maximumIdleConnections,
            idleConnectionTimeout: configuration.idleConnectionTimeout,
            maximumStreamsPerConnection: configuration.maximumStreamsPerConnection,
            spinWaitNanoseconds: Self.nanoseconds(spinning: configuration.synchronousSpinInterval))
        self.cookieJar =
            CurlLibrary.isAvailable
            ? CurlCookieJar(limits: .init(perDomain: configuration.maximumCookiesPerDomain, total: configuration.maximumCookies)) : nil
    }

    /// How many cookies the transport's jar holds now (0 without libcurl). The jar keeps at most
    /// ``Configuration/maximumCookiesPerDomain`` for a domain and ``Configuration/maximumCookies``
    /// in all; it is checked after each response that set cookies.
    public var storedCookieCount: Int { cookieJar?.count ?? 0 }

    deinit { eventLoop.stop() }

    /// Stops the transport: sends in flight fail with `FormDataError.cancelled`, and this returns
    /// once its thread has released every libcurl handle (the cookie jar file is written by then).
    /// Call it before a program that created its own transport exits, so no libcurl or OpenSSL
    /// work is still running while the process tears down. Sends started afterwards fail.
    public func shutdown() async {
        let loop = eventLoop
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                loop.stopAndWait()
                continuation.resume()
            }
        }
    }

    /// Every form: a `FormDataRequest` hands this transport its encoded body unspooled — up to
    /// ``inMemoryBodyLimit`` in memory, a longer one as its parts, which it streams.
    public var acceptedBodyForms: TransportBodyForms { .all }

    /// Everything: credentials go to libcurl, which sends Basic first (when
    /// `NetworkOptions.presentsCredentialsBeforeChallenge`) and answers a Digest or NTLM
    /// challenge; proxies, bandwidth limits, pinning, client certificates, per-request trust and
    /// the cookie jar; content encodings are decoded as the body arrives; interrupted uploads are
    /// resumed (libcurl reports `104` interim responses and sends `HEAD` and `PATCH`); every
    /// HTTP version, concurrent HTTP/2 sends to one origin sharing one connection.
    public var capabilities: TransportCapabilities {
        [
            .challengeAuthentication, .proxies, .bandwidthLimit, .publicKeyPinning, .clientCertificates, .customTrust, .cookies,
            .decodesContentEncoding, .resumableUploads, .informationalResponses, .httpVersions,
        ]
    }

    /// Bodies up to this many bytes get an upload buffer of their whole length, and are handed
    /// over in memory (``inMemoryBodyLimit``). 128 KiB.
    static let smallBodyLimit: UInt64 = 128 << 10

    /// 128 KiB: a body up to that size is read into memory where the send is prepared (off this
    /// transport's thread), so the transfer sends it without a round trip to the reader pool;
    /// a longer one is read ahead on the pool as it goes.
    public var inMemoryBodyLimit: UInt64 { Self.smallBodyLimit }

    /// The unsent bytes a resumable upload's connection keeps in the kernel at most
    /// (`TCP_NOTSENT_LOWAT`): without it Linux lets several MiB wait there, all lost and sent
    /// again when the connection is cut. 128 KiB.
    static let resumableUnsentLimit: Int32 = 128 << 10

    /// The error of a send started after ``shutdown()``.
    static let stoppedError = FormDataError.connectionFailure(
        underlying: UnderlyingError(domain: "FormDataKit", code: 0, message: "The curl transport has stopped"))

    /// ASIHTTPRequest's rules with ``Configuration/maximumRedirects`` when
    /// ``Configuration/followsRedirects``; nil otherwise (a redirect is the response).
    public var redirectPolicy: RedirectPolicy? {
        configuration.followsRedirects ? RedirectPolicy(maximumRedirects: configuration.maximumRedirects) : nil
    }

    /// Calls `start`, then runs this transport's libcurl loop on the calling thread until `wait`
    /// is finished, when no other thread runs it (``CurlEventLoop/drive(until:after:)``).
    /// - Parameters:
    ///   - wait: finished when the caller's send ends.
    ///   - start: starts the caller's send on this transport.
    package func drive(until wait: SynchronousWait, after start: () -> Void) {
        eventLoop.drive(until: wait, after: start)
    }

    /// Starts `request`; see `FormDataTransport.start(_:observer:)`.
    /// - Parameters:
    ///   - request: what to send; a segment body is streamed from its parts.
    ///   - observer: told of progress, the response head and the completion, on the thread that
    ///     runs the transport's loop (its own, or a caller's waiting in `startSynchronous()`).
    /// - Returns: a task that cancels the send.
    public func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        let send = CurlSend(transport: self, request: request, observer: observer)
        let jarFile: (jar: CurlCookieJar, file: String)? =
            if request.network.usesCookieJar, let jar = cookieJar, let file = configuration.cookieJarFile, jar.needsLoading(file) {
                (jar, file)
            } else {
                nil
            }
        guard CurlLibrary.loadError == nil, jarFile != nil || request.network.clientCertificate != nil else {
            begin(send)
            return send
        }
        // Files the exchange needs besides its body are read first, on the reader pool (a file
        // system may wait): the cookie jar's file, once; the client certificate's, each send.
        BodyReaderPool.shared.submit { [self] in
            do throws(FormDataError) {
                if let jarFile { try jarFile.jar.loadFileOnce(jarFile.file) }
                try send.readClientCertificate()
            } catch {
                send.complete(.whileSending(error))
                return
            }
            guard !send.isCompleted else { return }
            begin(send)
        }
        return send
    }

    /// Starts `send` on the event loop: its body is read there by its transfer (``BodyReadAhead``).
    private func begin(_ send: CurlSend) {
        if let reason = CurlLibrary.loadError {
            send.complete(.unableToCreateRequest(underlying: UnderlyingError(domain: "FormDataKit", code: 0, message: reason)))
        } else if !eventLoop.start(send) {
            send.complete(Self.stoppedError)
        }
    }
}
