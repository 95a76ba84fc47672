#if AsyncHTTPClient
import AsyncHTTPClient
import FormDataKit
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Sends requests with one long-lived AsyncHTTPClient `HTTPClient` (SwiftNIO): the fast path on
/// Linux.
///
/// - An encoded body (``TransportRequest/Body/source(_:)``) is streamed as it is read — by the
///   engine's one body reader, in chunks of ``Configuration/chunkSize`` read ahead on its reader
///   pool (never on an event loop or the cooperative pool) — with its exact `Content-Length` and
///   real backpressure: a chunk is taken only once the one before was written. A
///   ``FormDataRequest`` sent through this transport is never spooled to a temporary file
///   (``streamsBodySource`` is true). A file whose size changed since the length was computed
///   fails the send with ``FormDataError/fileChanged(path:expectedSize:actualSize:)`` (wrapped
///   in ``FormDataError/internalErrorWhileBuilding(underlying:)``, as for a spooled body).
/// - A body in memory or in a file (a compressed body) goes out with its exact length too.
/// - Progress counts the bytes handed to the client, which may run ahead of the bytes on the
///   wire by about one chunk plus the socket buffers (the send driver holds the last byte back
///   until the response head has arrived, so progress reaches 1.0 after the server answered).
/// - One exchange per ``start(_:observer:)``: the send driver times sends out, follows
///   redirects (``redirectPolicy``) and inflates a gzip response body as it arrives.
/// - Cancelling the task aborts the upload.
/// - Interrupted uploads are resumed (`shouldResumeInterruptedUploads`) by creating the upload
///   before its content: AsyncHTTPClient drops the `104` interim response.
///
/// Create one transport for the life of the process (or use ``shared``) and call ``shutdown()``
/// when done with a transport you created.
public final class AsyncHTTPClientTransport: FormDataTransport {
    /// How the transport's client is set up.
    public struct Configuration: Sendable {
        /// The client's TLS settings (trust roots, certificate verification, client certificate…),
        /// passed through to AsyncHTTPClient. Nil uses NIOSSL's defaults (the system trust store,
        /// full verification).
        public var tlsConfiguration: TLSConfiguration?
        /// Bytes read from a file per chunk: 1 MiB by default.
        public var chunkSize: Int
        /// Seconds allowed to connect (and finish a TLS handshake): 10 by default.
        public var connectTimeout: TimeInterval
        /// Whether 3xx redirects are followed, ASIHTTPRequest's way: at most 5; 301/302/303 become
        /// a `GET` without body; 307/308 send the body again from its parts; `Authorization` and
        /// `Cookie` never go to another origin; https to http is refused. True by default.
        public var followsRedirects: Bool

        /// A configuration; every argument has the default described on its property.
        /// - Parameters:
        ///   - tlsConfiguration: NIOSSL's client settings; nil for its defaults.
        ///   - chunkSize: bytes read per chunk (1 MiB).
        ///   - connectTimeout: seconds to connect and finish a TLS handshake (10).
        ///   - followsRedirects: whether redirects are followed, ASIHTTPRequest's way (true).
        public init(
            tlsConfiguration: TLSConfiguration? = nil, chunkSize: Int = 1 << 20,
            connectTimeout: TimeInterval = 10, followsRedirects: Bool = true
        ) {
            self.tlsConfiguration = tlsConfiguration
            self.chunkSize = max(1, chunkSize)
            self.connectTimeout = connectTimeout
            self.followsRedirects = followsRedirects
        }

        /// A configuration whose only trust anchors are `pinning`'s certificates (trust-anchor
        /// pinning: a pinned self-signed server certificate, or "only this CA"). See
        /// ``TrustAnchorPinning`` for what this can and cannot pin.
        /// - Throws: ``AsyncHTTPClientTransportError/invalidCertificate(index:reason:)`` when a
        ///   certificate is neither PEM nor DER.
        /// - Parameters:
        ///   - pinning: the only trusted certificates, and whether host names are checked.
        ///   - chunkSize: bytes read per chunk (1 MiB).
        ///   - connectTimeout: seconds to connect and finish a TLS handshake (10).
        ///   - followsRedirects: whether redirects are followed, ASIHTTPRequest's way (true).
        public init(
            pinning: TrustAnchorPinning, chunkSize: Int = 1 << 20, connectTimeout: TimeInterval = 10,
            followsRedirects: Bool = true
        ) throws(AsyncHTTPClientTransportError) {
            self.init(
                tlsConfiguration: try pinning.tlsConfiguration(), chunkSize: chunkSize,
                connectTimeout: connectTimeout, followsRedirects: followsRedirects)
        }
    }

    /// A transport with default settings, created when first used and kept for the life of the
    /// process (never shut down).
    public static let shared = AsyncHTTPClientTransport(configuration: Configuration())

    /// The settings the transport was created with.
    public let configuration: Configuration
    private let client: HTTPClient

    /// A transport with its own `HTTPClient` on NIO's shared event loop group. Call
    /// ``shutdown()`` when done with it.
    /// - Parameter configuration: TLS, chunk size, connect timeout and redirects.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: configuration.tlsConfiguration,
            // Redirects are followed by the transport itself, ASIHTTPRequest's way (RedirectPolicy).
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(
                connect: Self.duration(seconds: configuration.connectTimeout)),
            decompression: .disabled)
        clientConfiguration.httpVersion = .automatic
        // A refused connection or a failed TLS handshake fails the send at once (as URLSession
        // does) instead of being retried with backoff until the idle timeout.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
    }

    /// `seconds` as a Duration, an infinite or huge value clamped to ~10 years (no trap).
    static func duration(seconds: TimeInterval) -> TimeAmount {
        .nanoseconds(Int64(max(0, min(seconds.isNaN ? 0 : seconds, 3e8)) * 1e9))
    }

    /// Shuts the client down: sends in flight fail, later sends fail with a connection failure.
    /// - Throws: what shutting down AsyncHTTPClient's client throws (a second shutdown, for one).
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Every form: a ``FormDataRequest`` hands this transport a body up to `inMemoryBodyLimit`
    /// (1 MiB) in memory, read where the send is prepared, and a longer one unspooled, which it
    /// streams from the parts.
    public var acceptedBodyForms: TransportBodyForms { .all }

    /// Resumable uploads only: the body arrives as it was sent (the send driver inflates gzip);
    /// TLS settings are the client's (``Configuration/tlsConfiguration``), not per request.
    /// AsyncHTTPClient drops interim responses (it never reports a `104`), so a resumable upload
    /// is created first (`OPTIONS`, then a creation request, then the body as an append: see
    /// `TransportCapabilities.resumableUploads`). The HTTP version is the client's (h2 over TLS
    /// when the server offers it, HTTP/1.1 otherwise), reported on each response: a request's
    /// `httpVersion` other than `.automatic` fails before sending, naming it.
    public var capabilities: TransportCapabilities { [.resumableUploads] }

    /// ASIHTTPRequest's rules when ``Configuration/followsRedirects``; nil otherwise.
    public var redirectPolicy: RedirectPolicy? { configuration.followsRedirects ? RedirectPolicy() : nil }

    /// Starts `request`; see ``FormDataTransport/start(_:observer:)``.
    /// - Parameters:
    ///   - request: what to send; a segment body is streamed from its parts.
    ///   - observer: told of progress, the response head and the completion.
    /// - Returns: a task that cancels the send.
    public func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        let send = Send(request: request, observer: observer, chunkSize: configuration.chunkSize)
        send.run(on: client)
        return AsyncHTTPClientTransportTask(send: send)
    }
}

/// Cancels one send of an ``AsyncHTTPClientTransport``.
struct AsyncHTTPClientTransportTask: TransportTask {
    let send: Send

    func cancel() { send.cancel() }
}

/// One exchange on AsyncHTTPClient's delegate API: everything runs on NIO's event loops and the
/// body reader's pool, never on the Swift concurrency pool (a busy pool cannot
/// delay a send, or make it look idle).
final class Send: @unchecked Sendable {
    // `@unchecked`: the mutable fields are touched only under `lock`.
    private let request: TransportRequest
    private let observer: any TransportObserver
    private let chunkSize: Int
    private let lock = NSLock()
    private var task: HTTPClient.Task<Void>?
    private var cancelled = false
    private var bodyError: FormDataError?
    private var handedOver: Int64 = 0

    init(request: TransportRequest, observer: any TransportObserver, chunkSize: Int) {
        self.request = request
        self.observer = observer
        self.chunkSize = chunkSize
    }

    func cancel() {
        let task = lock.withLock { () -> HTTPClient.Task<Void>? in
            cancelled = true
            return self.task
        }
        task?.cancel()
    }

    /// The body's length; for a length not known, what was handed over counts as expected.
    var totalLength: Int64? { request.body.knownLength.map { Int64(clamping: $0) } }

    // MARK: - Running

    /// Starts the exchange; the observer hears the response as it arrives (the body as it was
    /// sent: the send driver inflates a gzip body) and then the end.
    func run(on client: HTTPClient) {
        let built: HTTPClient.Request
        do {
            built = try makeRequest()
        } catch {
            observer.transportDidFinish(.unableToCreateRequest(underlying: UnderlyingError(error)))
            return
        }
        let delegate = ResponseDelegate(observer: observer)
        let task = client.execute(request: built, delegate: delegate, deadline: nil)
        let cancelNow = lock.withLock { () -> Bool in
            self.task = task
            return cancelled
        }
        if cancelNow { task.cancel() }
        task.futureResult.whenComplete { [self] result in
            var failure: FormDataError?
            let (wasCancelled, fileError) = lock.withLock { () -> (Bool, FormDataError?) in
                self.task = nil
                return (cancelled, bodyError)
            }
            // A server may answer before the whole body was sent: the response is complete even
            // though the upload was stopped.
            if case .failure(let error) = result, !delegate.responseComplete.current {
                failure = fileError.map(Self.sendingCategory) ?? (wasCancelled ? .cancelled : map(error))
            }
            observer.transportDidFinish(failure)
        }
    }

    private func makeRequest() throws -> HTTPClient.Request {
        var headers = HTTPHeaders()
        // The framing is the body's: Content-Length, or chunked (contentLength nil) for a length not known.
        for header in request.headers
        where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame
            && header.name.caseInsensitiveCompare("Transfer-Encoding") != .orderedSame
        {
            headers.add(name: header.name, value: header.value)
        }
        var body: HTTPClient.Body?
        if let source = request.body.segments {
            let chunkSize = self.chunkSize
            let known = request.body.knownLength.map { Int64(clamping: $0) }
            body = .stream(contentLength: known) { [weak self] writer in
                let loop = MultiThreadedEventLoopGroup.singleton.any()
                guard let self else { return loop.makeFailedFuture(HTTPClientError.cancelled) }
                let stream = BodyStream(source, chunkSize: chunkSize, loop: loop)
                // A length not known: to the reader's end.
                return stream.write(into: writer, remaining: known ?? .max) { [weak self] count in self?.handedOver(count) }
                    .flatMapErrorThrowing {
                        [weak self] error in
                        if let error = error as? FormDataError { self?.bodyFailed(error) }
                        throw error
                    }
            }
        }
        return try HTTPClient.Request(url: request.url, method: HTTPMethod(rawValue: request.method), headers: headers, body: body)
    }

    // MARK: - Body callbacks

    /// A chunk of `count` bytes was handed to the client.
    private func handedOver(_ count: Int) {
        let soFar = lock.withLock { () -> Int64 in
            handedOver += Int64(count)
            return handedOver
        }
        let sent = min(soFar, totalLength ?? .max)
        observer.transportDidSendBodyData(bytesSent: Int64(count), totalBytesSent: sent, totalBytesExpected: totalLength ?? sent)
    }

    /// A part could not be read: the exchange ends now, with that error (not when the server
    /// gives up waiting for the rest).
    private func bodyFailed(_ error: FormDataError) {
        let task = lock.withLock { () -> HTTPClient.Task<Void>? in
            if bodyError == nil { bodyError = error }
            return self.task
        }
        task?.cancel()
    }

    // MARK: - Errors

    /// A file error met while streaming, in the category a spooling build reports it in.
    static func sendingCategory(_ error: FormDataError) -> FormDataError {
        switch error {
        case .fileChanged, .fileNotFound, .fileIsDirectory, .notARegularFile, .fileUnreadable:
            return .internalErrorWhileBuilding(underlying: error)
        default:
            return error
        }
    }

    /// Maps an AsyncHTTPClient or NIO error onto ASIHTTPRequest's categories.
    private func map(_ error: any Error) -> FormDataError {
        // NIO's errors describe themselves (e.g. the TLS verification failure); Foundation's
        // localized description of them is only "error 0".
        let underlying = UnderlyingError(
            domain: String(describing: type(of: error)), code: 0,
            message: String(describing: error))
        if error is CancellationError { return .cancelled }
        if let clientError = error as? HTTPClientError {
            if [.cancelled, .requestStreamCancelled].contains(clientError) { return .cancelled }
            if [
                HTTPClientError.connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout,
            ].contains(clientError) {
                return .timedOut(underlying: underlying)
            }
            if [HTTPClientError.invalidURL, .emptyHost, .emptyScheme].contains(clientError) {
                return .unableToCreateRequest(underlying: underlying)
            }
        }
        return .connectionFailure(underlying: underlying)
    }
}

/// Hands the response of one exchange to its observer as it arrives, on the event loop. While
/// the observer's consumer is behind (its ``ResponseDemand`` withheld), a body part's future
/// stays pending — AsyncHTTPClient reads no further for this exchange, and nothing waits on
/// the event loop — until demand is back.
private final class ResponseDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    // `@unchecked`: only the observer (Sendable), the demand and locked state are kept.
    typealias Response = Void
    private let observer: any TransportObserver
    private let demand: ResponseDemand?
    /// The pending body part's promise while paused, completed once (resumed, or the exchange failed).
    private let paused = Locked<EventLoopPromise<Void>?>(nil)
    /// Whether the whole response arrived.
    let responseComplete = Locked(false)

    init(observer: any TransportObserver) {
        self.observer = observer
        demand = ResponseDemand.of(observer)
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        var headers: [String: String] = [:]
        for (name, value) in head.headers {
            if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
        }
        let version: ResponseHTTPVersion? =
            switch (head.version.major, head.version.minor) {
            case (2, _): .http2
            case (1, 1): .http1_1
            case (1, 0): .http1_0
            default: nil
            }
        observer.transportDidReceiveResponse(
            TransportResponseHead(statusCode: Int(head.status.code), headers: headers, httpVersion: version))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        observer.transportDidReceiveBodyData(Data(buffer.readableBytesView))
        guard let demand, demand.isWithheld else { return task.eventLoop.makeSucceededVoidFuture() }
        let promise = task.eventLoop.makePromise(of: Void.self)
        paused.withLock { $0 = promise }
        let pauses = demand.pausesReceiving { [paused] in paused.withLock { $0.take() }?.succeed(()) }
        if !pauses { paused.withLock { $0.take() }?.succeed(()) }
        return promise.futureResult
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        // The exchange failed or was cancelled while paused: no promise is left pending.
        paused.withLock { $0.take() }?.succeed(())
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws { responseComplete.withLock { $0 = true } }
}
#endif
