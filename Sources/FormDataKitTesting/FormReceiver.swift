#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// An embedded HTTP server that receives form uploads and reports what it parsed. It runs on
/// threads of its own (``LoopbackHTTPServer``), never on the Swift concurrency pool, so it answers
/// promptly however busy the tests around it keep that pool.
///
/// Bound to 127.0.0.1 on a free port by default. Each request's body is read as a stream:
/// counted, hashed, inflated when `Content-Encoding: gzip`, and — up to ``keepLimit`` bytes —
/// parsed with ``FormBodyParser``. The response is the ``ReceivedRequest`` as JSON.
///
/// Routes (any method):
/// - `/status/<code>` — answers with that status code.
/// - `/delay/<milliseconds>` — reads the body, waits, then answers (for timeouts). At most
///   ``maximumDelayMilliseconds`` (one minute); a larger or non-numeric value is answered 400.
/// - `/discard` — counts the body and throws it away (add `?sha256=1` to hash it); for huge uploads.
///
/// On other routes the raw body is hashed unless the query has `sha256=0`.
/// - `/gzip` — answers with a gzip-compressed body (`Content-Encoding: gzip`).
/// - `/auth/<user>/<password>` — 401 unless `Authorization: Basic` matches.
/// - `/cookie?set=<name>=<value>` — answers with `Set-Cookie: <name>=<value>; Path=/` (the
///   request's own `Cookie` header is in ``ReceivedRequest/headers`` as for every route).
/// - anything else — parses and answers 200.
///
/// Limits (any web page can make a browser send requests to 127.0.0.1, so what one request can
/// make the receiver hold is bounded; see ``Limits`` for the defaults). The body is always read
/// to its end (and recorded), but:
/// - a body larger than ``keepLimit`` (after inflation) is counted and hashed, not parsed;
/// - a gzip body is inflated up to ``Limits/maxInflatedBytes``; beyond that inflation stops and
///   the request is answered **413** with a ``ReceivedRequest/parseError`` naming the limit;
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
/// The server reads a request head of up to 1 MiB (``LoopbackHTTPServer/maximumHeadBytes``; a
/// longer one is answered 431 before the receiver sees it); the header limit bounds what the
/// receiver keeps, logs and prints.
///
/// With a recording directory, every request is also stored there as a raw HTTP request file
/// (``RawHTTPRequest``: request line, headers, body as received), named `0001-POST.http`,
/// `0002-PUT.http`, …, which ``FormSnapshot/init(contentsOfCapture:ignoringHeaders:)`` and
/// `formdata diff` read. The numbering continues after the highest-numbered capture already in
/// the directory; an existing capture is never overwritten.
public final class FormReceiver: Sendable {
    /// Bodies larger than this (after inflation) are counted and hashed but not parsed: 256 MiB.
    public static let defaultKeepLimit = 256 << 20

    /// The longest wait `/delay/<milliseconds>` accepts: 60 000 ms.
    public static let maximumDelayMilliseconds: UInt64 = 60_000

    /// Bounds on what one request can make the receiver hold, and on how much it remembers.
    public struct Limits: Sendable, Equatable {
        /// The largest inflated size of a `Content-Encoding: gzip` body; beyond it inflation
        /// stops and the request is answered 413. Default 256 MiB.
        public var maxInflatedBytes: Int
        /// The most parts a form body may have (multipart parts, or URL-encoded pairs); a body
        /// with more is not parsed and is answered 413. Default 10 000.
        public var maxParts: Int
        /// The most bytes the request target and header fields (names, values and 4 bytes of
        /// separators each) may take; a request with more is answered 431. Default 32 KiB.
        public var maxHeaderBytes: Int
        /// The most requests the log (``FormReceiver/requests``) keeps; older ones are
        /// forgotten. Default 1000.
        public var logLimit: Int
        /// The most bytes (estimated: headers, fields, kept file bytes) the log keeps; the
        /// oldest requests are forgotten beyond it, except the newest one. Default 64 MiB.
        public var logByteLimit: Int
        /// The most file content bytes a logged request keeps, over all its files in body order;
        /// files beyond it keep only their size and SHA-256. Default 64 KiB.
        public var retainedFileBytes: Int

        /// Limits with the given values (each defaulting to the value in ``default``).
        /// - Parameters:
        ///   - maxInflatedBytes: see ``maxInflatedBytes``.
        ///   - maxParts: see ``maxParts``.
        ///   - maxHeaderBytes: see ``maxHeaderBytes``.
        ///   - logLimit: see ``logLimit``.
        ///   - logByteLimit: see ``logByteLimit``.
        ///   - retainedFileBytes: see ``retainedFileBytes``.
        public init(
            maxInflatedBytes: Int = 256 << 20, maxParts: Int = 10_000, maxHeaderBytes: Int = 32 << 10,
            logLimit: Int = 1000, logByteLimit: Int = 64 << 20, retainedFileBytes: Int = 64 << 10
        ) {
            self.maxInflatedBytes = maxInflatedBytes
            self.maxParts = maxParts
            self.maxHeaderBytes = maxHeaderBytes
            self.logLimit = logLimit
            self.logByteLimit = logByteLimit
            self.retainedFileBytes = retainedFileBytes
        }

        /// The defaults: 256 MiB inflated, 10 000 parts, 32 KiB of header fields, 1000 logged
        /// requests, 64 MiB of log, 64 KiB of file bytes per logged request.
        public static let `default` = Limits()
    }

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
    private let onRequest: (@Sendable (ReceivedRequest) -> Void)?
    private let captureCount: Locked<Int>
    /// Where raw captures of the requests are written, if anywhere.
    public let recordingDirectory: URL?

    private init(
        server: LoopbackHTTPServer, host: String, port: UInt16, keepLimit: Int,
        limits: Limits, recordingDirectory: URL?, firstCaptureNumber: Int,
        onRequest: (@Sendable (ReceivedRequest) -> Void)?
    ) {
        self.recordingDirectory = recordingDirectory
        self.server = server
        self.host = host
        self.port = port
        self.keepLimit = keepLimit
        self.limits = limits
        self.captureCount = Locked(firstCaptureNumber - 1)
        self.onRequest = onRequest
    }

    /// Starts a receiver on `host` (127.0.0.1) and `port` (0: a free one) and waits until it listens.
    /// `onRequest` is called with every request once its body has been read, before it is answered
    /// (with the request as the log keeps it: see ``Limits/retainedFileBytes``).
    /// With `recordingDirectory` (created if missing), each request is also written there as a
    /// raw capture (see ``ReceivedRequest/capturePath``), numbered after the captures already there.
    /// - Parameters:
    ///   - host: the address to listen on (127.0.0.1).
    ///   - port: the port; 0 picks a free one (read it back from ``port``).
    ///   - keepLimit: the largest body kept and parsed.
    ///   - limits: the bounds it enforces.
    ///   - recordingDirectory: where raw captures are written, nil for none.
    ///   - onRequest: called with each request before it is answered, nil for none.
    /// - Returns: the listening receiver; call ``stop()`` when done.
    /// - Throws: what binding or listening on the socket throws, or creating `recordingDirectory`.
    public static func start(
        host: String = "127.0.0.1", port: UInt16 = 0, keepLimit: Int = defaultKeepLimit,
        limits: Limits = .default, recordingDirectory: URL? = nil,
        onRequest: (@Sendable (ReceivedRequest) -> Void)? = nil
    ) async throws -> FormReceiver {
        var firstCaptureNumber = 1
        if let recordingDirectory {
            try FileManager.default.createDirectory(at: recordingDirectory, withIntermediateDirectories: true)
            firstCaptureNumber = highestCaptureNumber(in: recordingDirectory) + 1
        }
        let box = Locked<FormReceiver?>(nil)
        let server = try LoopbackHTTPServer(host: host, port: port) { request, body in
            guard let receiver = box.current else { return LoopbackHTTPServer.Response(status: 503) }
            return try receiver.handle(request, body: body)
        }
        let receiver = FormReceiver(
            server: server, host: host, port: server.port, keepLimit: keepLimit,
            limits: limits, recordingDirectory: recordingDirectory,
            firstCaptureNumber: firstCaptureNumber, onRequest: onRequest)
        box.withLock { $0 = receiver }
        return receiver
    }

    /// Stops listening and closes open connections.
    public func stop() async {
        await server.stop()
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
        let (full, rejection) = try receive(request, body: body, keep: !discard, hash: hashAll)
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
            Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)  // the connection's own thread
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
    package static func delayMilliseconds(_ argument: String?) -> UInt64? {
        guard let argument else { return 1000 }
        guard !argument.isEmpty, argument.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = UInt64(argument), value <= maximumDelayMilliseconds
        else { return nil }
        return value
    }

    /// How many bytes the request target and header fields take, as ``Limits/maxHeaderBytes``
    /// counts them.
    static func headBytes(of request: LoopbackHTTPServer.Request) -> Int {
        let target = request.encodedPath.utf8.count + request.encodedQuery.utf8.count
        return request.headers.reduce(request.method.utf8.count + target) {
            $0 + $1.name.utf8.count + $1.value.utf8.count + 4
        }
    }

    /// Compressed input is inflated this much at a time, so a gzip bomb overshoots
    /// ``Limits/maxInflatedBytes`` by at most about a thousand times this.
    private static let inflateSlice = 4096

    /// Reads the whole body as a stream and describes it; with the status to answer when it broke
    /// one of the ``limits``.
    private func receive(_ request: LoopbackHTTPServer.Request, body: BodyReader, keep: Bool, hash: Bool) throws -> (ReceivedRequest, Int?)
    {
        var rejection: Int?
        var failure: FormParseError?
        let headBytes = Self.headBytes(of: request)
        let headers: [ReceivedHeader]
        if headBytes > limits.maxHeaderBytes {
            headers = []
            rejection = 431
            failure = FormParseError(
                offset: 0,
                reason:
                    "The request target and header fields take \(headBytes) bytes, over the receiver's limit of \(limits.maxHeaderBytes) (not kept)"
            )
        } else {
            headers = request.headers.map { ReceivedHeader(name: $0.name, value: $0.value) }
        }
        let keep = keep && rejection == nil
        let gzip = request.header("Content-Encoding")?.lowercased().contains("gzip") ?? false
        var count = 0
        var rawHash = SHA256()
        var kept = Data()
        var keptAll = keep
        var inflatedCount = 0
        let inflater: StreamInflater? = gzip && rejection == nil ? try? StreamInflater() : nil
        let recorder = recordingDirectory.flatMap {
            CaptureWriter(
                directory: $0,
                number: captureCount.withLock {
                    $0 += 1
                    return $0
                }, request: request)
        }
        let keepLimit = self.keepLimit
        let maxInflated = limits.maxInflatedBytes
        do {
            while let chunk = try body.next() {
                recorder?.write(chunk)
                if hash { rawHash.update(chunk) }
                if let inflater {
                    var start = chunk.startIndex
                    while start < chunk.endIndex, failure == nil {
                        let end = min(chunk.endIndex, start + Self.inflateSlice)
                        do {
                            try inflater.feed(chunk[start..<end], offset: count + (start - chunk.startIndex)) { piece in
                                inflatedCount += piece.count
                                if keptAll {
                                    if kept.count + piece.count > keepLimit || inflatedCount > maxInflated {
                                        keptAll = false
                                        kept = Data()
                                    } else {
                                        kept.append(contentsOf: piece)
                                    }
                                }
                            }
                        } catch {
                            failure = error
                        }
                        if failure == nil, inflatedCount > maxInflated {
                            failure = FormParseError(
                                offset: count + (end - chunk.startIndex),
                                reason: "The gzip body inflates to more than the receiver's limit of \(maxInflated) bytes")
                            rejection = 413
                            keptAll = false
                            kept = Data()
                        }
                        start = end
                    }
                } else if keptAll {
                    if kept.count + chunk.count > keepLimit {
                        keptAll = false
                        kept = Data()
                    } else {
                        kept.append(chunk)
                    }
                }
                count += chunk.count
            }
        } catch {
            recorder?.abandon()  // a body that broke off is not a capture
            throw error
        }
        var form: ParsedForm?
        if failure == nil, let inflater, !inflater.isFinished, count > 0 {
            failure = FormParseError(offset: count, reason: "The gzip body is truncated")
        }
        if failure == nil, keep, keptAll, let contentType = request.header("Content-Type") {
            let expected = gzip ? nil : request.header("Content-Length").flatMap { Int($0) }
            if let parts = Self.partCountUpperBound(kept, contentType: contentType, stoppingAbove: limits.maxParts),
                parts > limits.maxParts
            {
                failure = FormParseError(
                    offset: 0, reason: "The body has more than \(limits.maxParts) parts, the receiver's limit (not parsed)")
                rejection = 413
            } else {
                do {
                    form = try FormBodyParser.parse(kept, contentType: contentType, expectedLength: expected)
                } catch {
                    failure = error
                }
            }
        }
        kept = Data()
        if failure == nil, !gzip, let declared = request.header("Content-Length").flatMap({ Int($0) }), declared != count {
            failure = FormParseError(offset: count, reason: "Content-Length says \(declared) bytes but \(count) arrived")
        }
        let capturePath = recorder?.finish {
            self.captureCount.withLock {
                $0 += 1
                return $0
            }
        }
        let received = ReceivedRequest(
            method: request.method, path: request.path, headers: headers, bodyBytes: count,
            bodySHA256: hash ? rawHash.hexDigest : nil, inflatedBytes: gzip ? inflatedCount : nil,
            form: form, parseError: failure, capturePath: capturePath)
        return (received, rejection)
    }

    /// An upper bound on the number of parts in `body` of type `contentType`, counted from its
    /// delimiters without parsing (multipart: `--boundary` occurrences minus the closing one;
    /// URL-encoded: `&` separators plus one), and counting stops once it is over `limit`; nil for
    /// other content types.
    package static func partCountUpperBound(_ body: Data, contentType: String, stoppingAbove limit: Int) -> Int? {
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let cap = limit < Int.max - 2 ? limit + 2 : Int.max
        switch mediaType {
        case "multipart/form-data":
            guard let boundary = FormBodyParser.parameter("boundary", in: contentType), !boundary.isEmpty else { return nil }
            return max(0, occurrences(of: Array("--\(boundary)".utf8), in: body, upTo: cap) - 1)
        case "application/x-www-form-urlencoded":
            return body.isEmpty ? 0 : occurrences(of: [UInt8(ascii: "&")], in: body, upTo: cap) + 1
        default:
            return nil
        }
    }

    /// How many times `needle` occurs in `body` without overlapping, counting at most `cap`.
    private static func occurrences(of needle: [UInt8], in body: Data, upTo cap: Int) -> Int {
        guard !needle.isEmpty else { return 0 }
        return body.withUnsafeBytes { (haystack: UnsafeRawBufferPointer) -> Int in
            guard let base = haystack.baseAddress else { return 0 }
            return needle.withUnsafeBytes { (pattern: UnsafeRawBufferPointer) -> Int in
                let first = Int32(needle[0])
                var found = 0
                var offset = 0
                // memchr finds each candidate first byte, memcmp checks the rest.
                while found < cap, haystack.count - offset >= pattern.count,
                    let hit = memchr(base + offset, first, haystack.count - offset - pattern.count + 1)
                {
                    let at = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + at, pattern.baseAddress!, pattern.count) == 0 {
                        found += 1
                        offset = at + pattern.count
                    } else {
                        offset = at + 1
                    }
                }
                return found
            }
        }
    }

    /// The highest number `N` of a capture `N-METHOD.http` in `directory` (0 when there is none).
    package static func highestCaptureNumber(in directory: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { name -> Int? in
            guard name.hasSuffix(".http"), let dash = name.firstIndex(of: "-") else { return nil }
            let digits = name[..<dash]
            guard !digits.isEmpty, digits.count <= 9, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(digits)
        }.max() ?? 0
    }

    // MARK: - Console output

    /// `text` with every control character — C0 (ESC, BEL, CR, LF, TAB, …), DEL, C1 (such as
    /// U+009B, the one-byte CSI) — and every line separator and bidirectional formatting
    /// character written as a visible `\u{1B}`-style escape, so that text a client sent cannot
    /// move the cursor, recolour, retitle or otherwise drive the terminal it is printed on.
    /// With `keepingNewlines`, line feeds stay as they are (for multi-line text whose every
    /// line was made safe).
    /// - Parameters:
    ///   - text: text a client sent.
    ///   - keepingNewlines: whether line feeds are kept.
    /// - Returns: the text, safe to print.
    public static func escapedForTerminal(_ text: String, keepingNewlines: Bool = false) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if keepingNewlines && scalar == "\n" {
                out.append(scalar)
            } else if needsEscape(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0, DEL, C1
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidirectional formatting
        case 0x2028, 0x2029: return true  // line and paragraph separators
        default: return false
        }
    }
}

extension ReceivedRequest {
    /// ``summary`` made safe to print on a terminal (what `formdata serve` prints): every
    /// control character the client sent — in the method, path, header names and values, field
    /// and file names, content types, field values, parse errors — is escaped as
    /// ``FormReceiver/escapedForTerminal(_:keepingNewlines:)`` does; the only line breaks are
    /// those between the summary's lines.
    public var terminalSummary: String {
        func safe(_ text: String) -> String { FormReceiver.escapedForTerminal(text) }
        var copy = self
        copy.method = safe(method)
        copy.path = safe(path)
        copy.headers = headers.map { ReceivedHeader(name: safe($0.name), value: safe($0.value)) }
        if var form = copy.form {
            // Names, file names and values are printed with `debugDescription`, which escapes
            // C0 controls itself; the last pass below catches the rest.
            for index in form.files.indices { form.files[index].contentType = form.files[index].contentType.map(safe) }
            copy.form = form
        }
        copy.parseError = parseError.map { FormParseError(offset: $0.offset, reason: safe($0.reason)) }
        return FormReceiver.escapedForTerminal(copy.summary, keepingNewlines: true)
    }

    /// This request as the receiver's log keeps it: the bytes of its files, in body order, only
    /// while they add up to at most `budget`; other files keep their size and SHA-256 only.
    func keepingFileBytes(upTo budget: Int) -> ReceivedRequest {
        guard var form, !form.files.isEmpty else { return self }
        var left = budget
        for index in form.files.indices {
            let size = form.files[index].data.count
            if size <= left {
                left -= size
            } else {
                form.files[index].data = Data()
            }
        }
        var copy = self
        copy.form = form
        return copy
    }

    /// About how many bytes this request takes in the receiver's log.
    var estimatedLogBytes: Int {
        var total =
            256 + method.utf8.count + path.utf8.count + (bodySHA256?.utf8.count ?? 0)
            + (capturePath?.utf8.count ?? 0) + (parseError?.reason.utf8.count ?? 0)
        for header in headers { total += 32 + header.name.utf8.count + header.value.utf8.count }
        if let form {
            for field in form.fields { total += 32 + field.name.utf8.count + field.value.utf8.count }
            for file in form.files {
                total += 128 + file.name.utf8.count + file.fileName.utf8.count + (file.contentType?.utf8.count ?? 0) + file.data.count
            }
        }
        return total
    }
}

/// The receiver's memory of past requests, bounded by ``FormReceiver/Limits/logLimit`` and
/// ``FormReceiver/Limits/logByteLimit``.
private struct RequestLog {
    struct Entry {
        var request: ReceivedRequest
        var bytes: Int
    }

    private(set) var entries: [Entry] = []
    private var bytes = 0

    /// Adds `request`, then forgets the oldest entries beyond the limits (never the newest).
    mutating func append(_ request: ReceivedRequest, limits: FormReceiver.Limits) {
        let entry = Entry(request: request, bytes: request.estimatedLogBytes)
        entries.append(entry)
        bytes += entry.bytes
        var drop = 0
        var left = bytes
        while entries.count - drop > 1, entries.count - drop > max(1, limits.logLimit) || left > limits.logByteLimit {
            left -= entries[drop].bytes
            drop += 1
        }
        if drop > 0 {
            entries.removeFirst(drop)
            bytes = left
        }
    }
}

extension JSONEncoder {
    /// An encoder with sorted keys (stable output).
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

/// Writes one request as a raw capture while its body streams in: head first, then each body
/// chunk (re-framed as a chunk when the request came chunked); renamed into place when complete,
/// never over an existing file.
private final class CaptureWriter {
    private let handle: FileHandle
    private let directory: URL
    private let partialURL: URL
    private let method: String
    private let number: Int
    private let chunked: Bool
    private var failed = false

    init?(directory: URL, number: Int, request: LoopbackHTTPServer.Request) {
        self.directory = directory
        self.number = number
        method = request.method.filter { $0.isASCII && $0.isLetter }
        partialURL = directory.appendingPathComponent(".\(Self.name(number, method)).partial")
        guard FileManager.default.createFile(atPath: partialURL.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: partialURL)
        else { return nil }
        self.handle = handle
        chunked = request.header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
        let query = request.encodedQuery
        let target = request.encodedPath + (query.isEmpty ? "" : "?" + query)
        let head = RawHTTPRequest(
            method: request.method, target: target, version: "HTTP/1.1",
            headers: request.headers.sorted { $0.name < $1.name }.map { ReceivedHeader(name: $0.name, value: $0.value) },
            body: Data()
        ).head
        write(raw: head)
    }

    /// `0001-POST.http`: the number with at least four digits, the method's letters.
    private static func name(_ number: Int, _ method: String) -> String {
        String(repeating: "0", count: max(0, 4 - String(number).count)) + "\(number)-\(method).http"
    }

    func write(_ chunk: Data) {
        guard !chunk.isEmpty else { return }
        if chunked {
            write(raw: Data((String(chunk.count, radix: 16) + "\r\n").utf8))
            write(raw: chunk)
            write(raw: Data("\r\n".utf8))
        } else {
            write(raw: chunk)
        }
    }

    private func write(raw data: Data) {
        guard !failed else { return }
        do { try handle.write(contentsOf: data) } catch { failed = true }
    }

    /// Closes and removes the unfinished file.
    func abandon() {
        try? handle.close()
        try? FileManager.default.removeItem(at: partialURL)
    }

    /// Closes the file and moves it into place; the final path, or nil when writing failed. When
    /// a file already has the capture's name (another writer in the same directory), the capture
    /// takes the number `nextNumber` gives instead.
    func finish(nextNumber: () -> Int) -> String? {
        if chunked { write(raw: Data("0\r\n\r\n".utf8)) }
        try? handle.close()
        var number = self.number
        if !failed {
            for _ in 0..<100 {
                let finalURL = directory.appendingPathComponent(Self.name(number, method))
                // link(2) fails when the name exists: an existing capture is never replaced.
                if link(partialURL.path, finalURL.path) == 0 {
                    try? FileManager.default.removeItem(at: partialURL)
                    return finalURL.path
                }
                if errno != EEXIST, !FileManager.default.fileExists(atPath: finalURL.path),
                    (try? FileManager.default.moveItem(at: partialURL, to: finalURL)) != nil
                {
                    return finalURL.path  // a file system without hard links
                }
                guard FileManager.default.fileExists(atPath: finalURL.path) else { break }
                number = nextNumber()
            }
        }
        try? FileManager.default.removeItem(at: partialURL)
        return nil
    }
}
