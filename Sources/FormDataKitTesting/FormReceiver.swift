import FlyingFox
import FlyingSocks
import FormDataKit
import Foundation

/// An embedded HTTP server (FlyingFox) that receives form uploads and reports what it parsed.
///
/// Bound to 127.0.0.1 on a free port by default. Each request's body is read as a stream:
/// counted, hashed, inflated when `Content-Encoding: gzip`, and — up to ``keepLimit`` bytes —
/// parsed with ``FormBodyParser``. The response is the ``ReceivedRequest`` as JSON.
///
/// Routes (any method):
/// - `/status/<code>` — answers with that status code.
/// - `/delay/<milliseconds>` — reads the body, waits, then answers (for timeouts).
/// - `/discard` — counts the body and throws it away (add `?sha256=1` to hash it); for huge uploads.
///
/// On other routes the raw body is hashed unless the query has `sha256=0`.
/// - `/gzip` — answers with a gzip-compressed body (`Content-Encoding: gzip`).
/// - `/auth/<user>/<password>` — 401 unless `Authorization: Basic` matches.
/// - anything else — parses and answers 200.
///
/// With a recording directory, every request is also stored there as a raw HTTP request file
/// (``RawHTTPRequest``: request line, headers, body as received), named `0001-POST.http`,
/// `0002-PUT.http`, …, which ``FormSnapshot/init(contentsOfCapture:ignoringHeaders:)`` and
/// `formdata diff` read.
public final class FormReceiver: Sendable {
    /// Bodies larger than this (after inflation) are counted and hashed but not parsed: 256 MiB.
    public static let defaultKeepLimit = 256 << 20

    /// The port the receiver listens on.
    public let port: UInt16
    /// The host it is bound to.
    public let host: String
    /// The largest body it keeps and parses.
    public let keepLimit: Int

    private let server: HTTPServer
    private let runTask: Task<Void, Never>
    private let log = Locked<[ReceivedRequest]>([])
    private let onRequest: (@Sendable (ReceivedRequest) -> Void)?
    private let captureCount = Locked(0)
    /// Where raw captures of the requests are written, if anywhere.
    public let recordingDirectory: URL?

    private init(server: HTTPServer, runTask: Task<Void, Never>, host: String, port: UInt16, keepLimit: Int,
                 recordingDirectory: URL?, onRequest: (@Sendable (ReceivedRequest) -> Void)?) {
        self.recordingDirectory = recordingDirectory
        self.server = server
        self.runTask = runTask
        self.host = host
        self.port = port
        self.keepLimit = keepLimit
        self.onRequest = onRequest
    }

    /// Starts a receiver on `host` (127.0.0.1) and `port` (0: a free one) and waits until it listens.
    /// `onRequest` is called with every request once its body has been read, before it is answered.
    /// With `recordingDirectory` (created if missing), each request is also written there as a
    /// raw capture (see ``ReceivedRequest/capturePath``).
    public static func start(host: String = "127.0.0.1", port: UInt16 = 0, keepLimit: Int = defaultKeepLimit,
                             recordingDirectory: URL? = nil,
                             onRequest: (@Sendable (ReceivedRequest) -> Void)? = nil) async throws -> FormReceiver {
        if let recordingDirectory {
            try FileManager.default.createDirectory(at: recordingDirectory, withIntermediateDirectories: true)
        }
        let box = Locked<FormReceiver?>(nil)
        let server = HTTPServer(
            config: .init(address: try .inet(ip4: host, port: port), timeout: 60,
                          sharedRequestBufferSize: 64 * 1024, sharedRequestReplaySize: 64 * 1024,
                          logger: .disabled),
            handler: ClosureHTTPHandler { request in
                guard let receiver = box.current else { return HTTPResponse(statusCode: .serviceUnavailable) }
                return try await receiver.handle(request)
            })
        let runTask = Task { _ = try? await server.run() }
        do {
            try await server.waitUntilListening(timeout: 10)
        } catch {
            runTask.cancel()
            throw error
        }
        guard case .ip4(_, let boundPort)? = await server.listeningAddress else {
            await server.stop()
            runTask.cancel()
            throw SocketError.unsupportedAddress
        }
        let receiver = FormReceiver(server: server, runTask: runTask, host: host, port: boundPort,
                                    keepLimit: keepLimit, recordingDirectory: recordingDirectory, onRequest: onRequest)
        box.withLock { $0 = receiver }
        return receiver
    }

    /// Stops listening and closes open connections.
    public func stop() async {
        await server.stop(timeout: 1)
        runTask.cancel()
        _ = await runTask.value
    }

    /// `http://host:port`.
    public var baseURL: URL { URL(string: "http://\(host):\(port)")! }

    /// The URL of `path` (e.g. `/upload`, `/status/404`) on this receiver.
    public func url(_ path: String) -> URL {
        URL(string: "http://\(host):\(port)\(path.hasPrefix("/") ? path : "/" + path)")!
    }

    /// Every request received so far, in order.
    public var requests: [ReceivedRequest] { log.current }

    /// The last request received.
    public var lastRequest: ReceivedRequest? { log.current.last }

    /// Forgets the requests received so far.
    public func reset() { log.withLock { $0.removeAll() } }

    // MARK: - Handling

    private func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        let parts = request.path.split(separator: "/").map(String.init)
        let route = parts.first ?? ""
        let discard = route == "discard"
        let hashAll = discard
            ? request.query.contains { $0.name == "sha256" && $0.value == "1" }
            : !request.query.contains { $0.name == "sha256" && $0.value == "0" }
        let received = try await receive(request, keep: !discard, hash: hashAll)
        log.withLock { $0.append(received) }
        defer { onRequest?(received) }

        let json = (try? JSONEncoder.sorted.encode(received)) ?? Data()
        let jsonHeaders: HTTPHeaders = [.contentType: "application/json; charset=utf-8"]
        switch route {
        case "status":
            let code = parts.count > 1 ? Int(parts[1]) ?? 500 : 500
            return HTTPResponse(statusCode: HTTPStatusCode(code, phrase: HTTPReasonPhrase.phrase(for: code).isEmpty ? "Status \(code)" : HTTPReasonPhrase.phrase(for: code)), headers: jsonHeaders, body: json)
        case "delay":
            let milliseconds = parts.count > 1 ? UInt64(parts[1]) ?? 1000 : 1000
            try? await Task.sleep(nanoseconds: milliseconds * 1_000_000)
            return HTTPResponse(statusCode: .ok, headers: jsonHeaders, body: json)
        case "gzip":
            var headers = jsonHeaders
            headers[.contentEncoding] = "gzip"
            return HTTPResponse(statusCode: .ok, headers: headers, body: GzipCompress.compress(json))
        case "auth":
            let expected = parts.count > 2
                ? "Basic " + Data("\(parts[1]):\(parts[2])".utf8).base64EncodedString() : ""
            if request.headers[.authorization] != expected {
                return HTTPResponse(statusCode: .unauthorized,
                                    headers: [HTTPHeader("WWW-Authenticate"): "Basic realm=\"receiver\""],
                                    body: Data("authentication needed".utf8))
            }
            return HTTPResponse(statusCode: .ok, headers: jsonHeaders, body: json)
        default:
            return HTTPResponse(statusCode: .ok, headers: jsonHeaders, body: json)
        }
    }

    /// Reads the whole body as a stream and describes it.
    private func receive(_ request: HTTPRequest, keep: Bool, hash: Bool) async throws -> ReceivedRequest {
        let headers = request.headers.map { ReceivedHeader(name: $0.key.rawValue, value: $0.value) }
        let gzip = request.headers[.contentEncoding]?.lowercased().contains("gzip") ?? false
        var count = 0
        var rawHash = SHA256()
        var kept = Data()
        var keptAll = keep
        var inflatedCount = 0
        var failure: FormParseError?
        let inflater: StreamInflater? = gzip ? try? StreamInflater() : nil
        let recorder = recordingDirectory.flatMap { CaptureWriter(directory: $0, number: captureCount.withLock { $0 += 1; return $0 }, request: request) }
        do {
            for try await chunk in request.bodySequence {
                recorder?.write(chunk)
                if hash { rawHash.update(chunk) }
                if let inflater, failure == nil {
                    do {
                        try inflater.feed(chunk, offset: count) { piece in
                            inflatedCount += piece.count
                            if keptAll {
                                if kept.count + piece.count > keepLimit { keptAll = false; kept = Data() } else { kept.append(contentsOf: piece) }
                            }
                        }
                    } catch {
                        failure = error
                    }
                } else if keptAll {
                    if kept.count + chunk.count > keepLimit { keptAll = false; kept = Data() } else { kept.append(chunk) }
                }
                count += chunk.count
            }
        } catch {
            recorder?.abandon() // a body that broke off is not a capture
            throw error
        }
        var form: ParsedForm?
        if failure == nil, let inflater, !inflater.isFinished, count > 0 {
            failure = FormParseError(offset: count, reason: "The gzip body is truncated")
        }
        if failure == nil, keep, keptAll, let contentType = request.headers[.contentType] {
            let expected = gzip ? nil : request.headers[.contentLength].flatMap { Int($0) }
            do {
                form = try FormBodyParser.parse(kept, contentType: contentType, expectedLength: expected)
            } catch {
                failure = error
            }
        }
        if failure == nil, !gzip, let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared != count {
            failure = FormParseError(offset: count, reason: "Content-Length says \(declared) bytes but \(count) arrived")
        }
        return ReceivedRequest(
            method: request.method.rawValue, path: request.path, headers: headers, bodyBytes: count,
            bodySHA256: hash ? rawHash.hexDigest : nil, inflatedBytes: gzip ? inflatedCount : nil,
            form: form, parseError: failure, capturePath: recorder?.finish())
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
/// chunk (re-framed as a chunk when the request came chunked); renamed into place when complete.
private final class CaptureWriter {
    private let handle: FileHandle
    private let partialURL: URL
    private let finalURL: URL
    private let chunked: Bool
    private var failed = false

    init?(directory: URL, number: Int, request: HTTPRequest) {
        let method = request.method.rawValue.filter { $0.isLetter }
        let name = String(repeating: "0", count: max(0, 4 - String(number).count)) + "\(number)-\(method).http"
        finalURL = directory.appendingPathComponent(name)
        partialURL = directory.appendingPathComponent(".\(name).partial")
        guard FileManager.default.createFile(atPath: partialURL.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: partialURL)
        else { return nil }
        self.handle = handle
        chunked = request.headers[HTTPHeader("Transfer-Encoding")]?.lowercased().contains("chunked") ?? false
        let query = request.target.query(percentEncoded: true)
        let target = request.target.path(percentEncoded: true) + (query.isEmpty ? "" : "?" + query)
        let head = RawHTTPRequest(
            method: request.method.rawValue, target: target, version: "HTTP/1.1",
            headers: request.headers.sorted { $0.key.rawValue < $1.key.rawValue }.map { ReceivedHeader(name: $0.key.rawValue, value: $0.value) },
            body: Data()).head
        write(raw: head)
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

    /// Closes the file and moves it into place; the final path, or nil when writing failed.
    func finish() -> String? {
        if chunked { write(raw: Data("0\r\n\r\n".utf8)) }
        try? handle.close()
        guard !failed, (try? FileManager.default.moveItem(at: partialURL, to: finalURL)) != nil else {
            try? FileManager.default.removeItem(at: partialURL)
            return nil
        }
        return finalURL.path
    }
}
