#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// An embedded HTTP server that receives form uploads and reports what it parsed. It runs on
/// threads of its own (``LoopbackHTTPServer``: SwiftNIO's HTTP/1.1 on NIO event loops, a thread
/// per request being handled), never on the Swift concurrency pool, so it answers promptly
/// however busy the tests around it keep that pool.
///
/// Bound to 127.0.0.1 on a free port by default. Each request's body is read as a stream:
/// counted, hashed, inflated when `Content-Encoding: gzip`, and — up to ``keepLimit`` bytes —
/// parsed with ``FormBodyParser``. The response is the ``ReceivedRequest`` as JSON.
///
/// Routes (any method):
/// - `/status/<code>` — answers with that status code.
/// - `/delay/<milliseconds>` — reads the body, waits, then answers (for timeouts). At most
///   ``maximumDelayMilliseconds`` (one minute); a larger or non-numeric value is answered 400.
/// - `/discard` — counts the body and throws it away (add `?sha256=1` to hash it); for huge
///   uploads. Never recorded.
///
/// On other routes the raw body is hashed unless the query has `sha256=0`.
/// - `/gzip` — answers with a gzip-compressed body (`Content-Encoding: gzip`).
/// - `/auth/<user>/<password>` — 401 unless `Authorization: Basic` matches.
/// - `/cookie?set=<name>=<value>` — answers with `Set-Cookie: <name>=<value>; Path=/` (the
///   request's own `Cookie` header is in ``ReceivedRequest/headers`` as for every route).
/// - anything else — parses and answers 200.
///
/// Limits (any web page can make a browser send requests to 127.0.0.1, so what one request can
/// make the receiver hold is bounded; see ``Limits`` for the defaults). Connections, deadlines
/// and sizes are enforced by the server before the receiver sees a request
/// (``Limits/maxConnections``, ``Limits/headDeadline``, ``Limits/bodyIdleDeadline``,
/// ``Limits/maxBodyBytes``), and so is RFC 9112 framing (a request whose framing is ambiguous
/// is answered 400 or 501 and its connection closed). A request that reaches the receiver has
/// its body read to its end (and recorded), but:
/// - a body larger than ``keepLimit`` (after inflation) is counted and hashed, not parsed;
/// - a gzip body is inflated up to ``Limits/maxInflatedBytes`` (64 MiB); beyond that inflation
///   stops at once and the request is answered **413** with a ``ReceivedRequest/parseError``
///   naming the limit;
/// - what all requests handled at once hold to inflate and parse their bodies (a URL-encoded
///   body whole, a multipart body without its large files; then the parsed form and the JSON
///   answer) is bounded in total by
///   ``Limits/maxBufferedBytes`` (256 MiB): a request that would pass it stops inflating and
///   keeping, and is answered **413** naming the budget (``bufferedBytes``, ``peakBufferedBytes``);
/// - a form body with more than ``Limits/maxParts`` parts (counted from its delimiters before
///   parsing) is not parsed and is answered **413**;
/// - a request whose target and header fields take more than ``Limits/maxHeaderBytes`` bytes is
///   answered **431**; its header fields are not kept and its body is not parsed;
/// - the log (``requests``) keeps the newest ``Limits/logLimit`` requests and forgets older ones
///   once it holds more than ``Limits/logByteLimit`` bytes (the newest request is always kept);
///   each logged request keeps the bytes of its files only up to ``Limits/retainedFileBytes`` in
///   all — larger files keep their ``ParsedFile/size`` and ``ParsedFile/sha256``, with empty
///   ``ParsedFile/data``.
///
/// The server itself refuses (431, before the receiver sees it) a head whose header fields
/// take more than twice ``Limits/maxHeaderBytes`` (at least 64 KiB).
///
/// With a recording directory, every request except `/discard` is also stored there as a raw
/// HTTP request file (``RawHTTPRequest``: request line, headers, body as received), named
/// `0001-POST.http`, `0002-PUT.http`, …, which
/// ``FormSnapshot/init(contentsOfCapture:ignoringHeaders:)`` and `formdata diff` read. Captures
/// are created 0600, in a directory created 0700 (they hold credentials and form passwords); a
/// request larger than ``Limits/maxCaptureBytes`` is not recorded, and recording stops once the
/// captures written take ``Limits/maxRecordedBytes``. The numbering continues after the
/// highest-numbered capture already in the directory; an existing capture is never overwritten.
public final class FormReceiver: Sendable {
    /// Bodies larger than this (after inflation) are counted and hashed but not parsed: 256 MiB.
    public static let defaultKeepLimit = 256 << 20

    /// The longest wait `/delay/<milliseconds>` accepts: 60 000 ms.
    public static let maximumDelayMilliseconds: UInt64 = 60_000

    /// The port the receiver listens on.
    public let port: UInt16
    /// The host it is bound to.
    public let host: String
    /// The largest body it keeps and parses.
    public let keepLimit: Int
    /// The bounds it enforces (see ``Limits``).
    public let limits: Limits

    private let server: LoopbackHTTPServer
    private let log = Locked(RequestLog())
    /// What all requests being handled hold to inflate and parse (``Limits/maxBufferedBytes``).
    let budget: ReceiverBufferBudget
    private let onRequest: (@Sendable (ReceivedRequest) -> Void)?
    let recorder: Recorder?
    /// Where raw captures of the requests are written, if anywhere.
    public let recordingDirectory: URL?

    private init(
        server: LoopbackHTTPServer, host: String, port: UInt16, keepLimit: Int,
        limits: Limits, recorder: Recorder?, onRequest: (@Sendable (ReceivedRequest) -> Void)?
    ) {
        self.recordingDirectory = recorder?.directory
        self.server = server
        self.host = host
        self.port = port
        self.keepLimit = keepLimit
        self.limits = limits
        budget = ReceiverBufferBudget(total: limits.maxBufferedBytes)
        self.recorder = recorder
        self.onRequest = onRequest
    }

    /// Starts a receiver on `host` (127.0.0.1) and `port` (0: a free one) and waits until it listens.
    /// `onRequest` is called with every request once its body has been read, before it is answered
    /// (with the request as the log keeps it: see ``Limits/retainedFileBytes``).
    /// With `recordingDirectory` (created 0700 if missing), each request but `/discard` is also
    /// written there as a raw capture (0600; see ``ReceivedRequest/capturePath``), numbered after
    /// the captures already there, within ``Limits/maxCaptureBytes`` and
    /// ``Limits/maxRecordedBytes``.
    /// - Parameters:
    ///   - host: the address to listen on (127.0.0.1).
    ///   - port: the port; 0 picks a free one (read it back from ``port``).
    ///   - keepLimit: the largest body kept and parsed.
    ///   - limits: the bounds it enforces.
    ///   - recordingDirectory: where raw captures are written, nil for none.
    ///   - onRequest: called with each request before it is answered, nil for none.
    ///   - log: called with a line for each thing an operator should know — accept errors and the
    ///     back-off, refused connections and requests, clients dropped at a deadline, requests not
    ///     recorded — from the server's threads; nil for none. After `onRequest`, so that a
    ///     trailing closure is still `onRequest`.
    /// - Returns: the listening receiver; call ``stop()`` when done.
    /// - Throws: what binding or listening on the socket throws, or creating `recordingDirectory`.
    public static func start(
        host: String = "127.0.0.1", port: UInt16 = 0, keepLimit: Int = defaultKeepLimit,
        limits: Limits = .default, recordingDirectory: URL? = nil,
        onRequest: (@Sendable (ReceivedRequest) -> Void)? = nil, log: (@Sendable (String) -> Void)? = nil
    ) async throws -> FormReceiver {
        let log = log ?? { _ in }
        let recorder = try recordingDirectory.map { try Recorder(directory: $0, limits: limits, log: log) }
        let box = Locked<FormReceiver?>(nil)
        let server = try await LoopbackHTTPServer.start(host: host, port: port, configuration: limits.serverConfiguration, log: log) {
            request, body in
            guard let receiver = box.current else { return .text(503, "starting") }
            return try receiver.handle(request, body: body)
        }
        let receiver = FormReceiver(
            server: server, host: host, port: server.port, keepLimit: keepLimit,
            limits: limits, recorder: recorder, onRequest: onRequest)
        box.withLock { $0 = receiver }
        return receiver
    }

    /// Stops listening and closes open connections.
    public func stop() async {
        await server.stop()
    }

    /// Stops listening and closes open connections, from synchronous code — so that it can go
    /// in a `defer` right after ``start(host:port:keepLimit:limits:recordingDirectory:onRequest:log:)``:
    ///
    /// ```swift
    /// let receiver = try await FormReceiver.start()
    /// defer { receiver.stopSynchronously() }
    /// ```
    ///
    /// Off SwiftNIO's event-loop threads (a test, the main thread, a thread of your own, the
    /// receiver's `onRequest` callback) it returns once the listening socket and the open
    /// connections are closed, as ``stop()`` does: the port refuses connections from then on.
    /// On an event-loop thread (a channel handler, a callback of an `EventLoopFuture`) it does not
    /// wait, since a loop thread that waits for its own loop would never wake: it starts the
    /// closes and returns at once, and they complete as soon as that loop runs again (`await`
    /// ``stop()`` afterwards to know when). Calling it again, or after ``stop()``, does nothing.
    public func stopSynchronously() {
        server.stopFromAnyThread()
    }

    /// `http://host:port`.
    public var baseURL: URL { URL(string: "http://\(host):\(port)")! }

    /// The URL of `path` (e.g. `/upload`, `/status/404`) on this receiver.
    /// - Parameter path: a path, with or without its leading `/`.
    /// - Returns: the absolute URL.
    public func url(_ path: String) -> URL {
        URL(string: "http://\(host):\(port)\(path.hasPrefix("/") ? path : "/" + path)")!
    }

    /// The requests received so far, in order: the newest ``Limits/logLimit`` of them (fewer when
    /// they exceed ``Limits/logByteLimit``), each with file bytes up to ``Limits/retainedFileBytes``.
    public var requests: [ReceivedRequest] { log.withLock { $0.entries.map(\.request) } }

    /// The last request received.
    public var lastRequest: ReceivedRequest? { log.withLock { $0.entries.last?.request } }

    /// The bytes the requests being handled hold now to inflate and parse their bodies, at most
    /// ``Limits/maxBufferedBytes`` (0 once every request has been answered).
    public var bufferedBytes: Int { budget.held }

    /// The most bytes held at once to inflate and parse bodies since the receiver started (never
    /// more than ``Limits/maxBufferedBytes``).
    public var peakBufferedBytes: Int { budget.peak }

    /// Forgets the requests received so far.
    public func reset() { log.withLock { $0 = RequestLog() } }

    // MARK: - Handling

    private func handle(_ request: LoopbackHTTPServer.Request, body: BodyReader) throws -> LoopbackHTTPServer.Response {
        let parts = request.path.split(separator: "/").map(String.init)
        let route = parts.first ?? ""
        let discard = route == "discard"
        let hashAll =
            discard
            ? request.query.contains { $0.name == "sha256" && $0.value == "1" }
            : !request.query.contains { $0.name == "sha256" && $0.value == "0" }
        // What the request holds to inflate and parse its body, given back once it is answered.
        var held = 0
        defer { budget.release(held) }
        let (full, rejection) = try receive(request, body: body, keep: !discard, hash: hashAll, record: !discard, held: &held)
        let received = full.keepingFileBytes(upTo: limits.retainedFileBytes)
        log.withLock { $0.append(received, limits: limits) }
        defer { onRequest?(received) }

        let json = (try? JSONEncoder.sorted.encode(received)) ?? Data()
        let jsonHeaders = [(name: "Content-Type", value: "application/json; charset=utf-8")]
        if let rejection {
            return .init(status: rejection, headers: jsonHeaders, body: json)
        }
        switch route {
        case "status":
            let code = parts.count > 1 ? Int(parts[1]) ?? 500 : 500
            return .init(status: code, headers: jsonHeaders, body: json)
        case "delay":
            guard let milliseconds = Self.delayMilliseconds(parts.count > 1 ? parts[1] : nil) else {
                return .init(
                    status: 400, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
                    body: Data("/delay/<milliseconds> takes 0 to \(Self.maximumDelayMilliseconds)\n".utf8))
            }
            Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)  // the request's own thread
            return .init(status: 200, headers: jsonHeaders, body: json)
        case "gzip":
            return .init(status: 200, headers: jsonHeaders + [(name: "Content-Encoding", value: "gzip")], body: GzipCompress.compress(json))
        case "cookie":
            let cookies = request.query.filter { $0.name == "set" && !$0.value.contains(where: \.isNewline) }.map {
                (name: "Set-Cookie", value: "\($0.value); Path=/")
            }
            return .init(status: 200, headers: jsonHeaders + cookies, body: json)
        case "auth":
            let expected =
                parts.count > 2
                ? "Basic " + Data("\(parts[1]):\(parts[2])".utf8).base64EncodedString() : ""
            if request.header("Authorization") != expected {
                return .init(
                    status: 401, headers: [(name: "WWW-Authenticate", value: "Basic realm=\"receiver\"")],
                    body: Data("authentication needed".utf8))
            }
            return .init(status: 200, headers: jsonHeaders, body: json)
        default:
            return .init(status: 200, headers: jsonHeaders, body: json)
        }
    }

    /// The wait `/delay/<argument>` asks for, in milliseconds: 1000 without an argument; nil
    /// (answered 400) unless the argument is decimal digits for at most
    /// ``maximumDelayMilliseconds``.
    static func delayMilliseconds(_ argument: String?) -> UInt64? {
        guard let argument else { return 1000 }
        guard !argument.isEmpty, argument.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = UInt64(argument), value <= maximumDelayMilliseconds
        else { return nil }
        return value
    }

}
