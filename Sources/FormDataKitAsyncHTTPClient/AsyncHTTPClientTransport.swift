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
/// - An encoded body (``TransportRequest/Body/source(_:)``) is streamed as it is read — literal
///   segments as they are, file ranges in chunks of ``Configuration/chunkSize`` on the
///   transport's own file-reading thread (never the cooperative pool) — with its exact
///   `Content-Length` and real backpressure. A
///   ``FormDataRequest`` sent through this transport is never spooled to a temporary file
///   (``streamsBodySource`` is true). A file whose size changed since the length was computed
///   fails the send with ``FormDataError/fileChanged(path:expectedSize:actualSize:)`` (wrapped
///   in ``FormDataError/internalErrorWhileBuilding(underlying:)``, as for a spooled body).
/// - A body in memory or in a file (a compressed body) goes out with its exact length too.
/// - Progress counts the bytes handed to the client, which may run ahead of the bytes on the
///   wire by about one chunk plus the socket buffers; the last chunk is reported only once the
///   response head has arrived, so progress reaches 1.0 after the server answered.
/// - ``TransportRequest/timeoutInterval`` is an idle timeout: a send with no body chunk handed
///   over and no response byte received for that long fails with
///   ``FormDataError/timedOut(underlying:)``.
/// - Cancelling the task aborts the upload.
/// - A gzip response body is inflated, as ``URLSessionTransport`` does.
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
    /// The thread that reads file ranges (one, so chunk buffers come from one malloc arena and
    /// peak memory stays flat; reads are short and sequential per send).
    private let fileIO: NIOThreadPool

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
        fileIO = NIOThreadPool(numberOfThreads: 1)
        fileIO.start()
    }

    /// `seconds` as a Duration, an infinite or huge value clamped to ~10 years (no trap).
    static func duration(seconds: TimeInterval) -> TimeAmount {
        .nanoseconds(Int64(max(0, min(seconds.isNaN ? 0 : seconds, 3e8)) * 1e9))
    }

    /// Shuts the client down: sends in flight fail, later sends fail with a connection failure.
    /// - Throws: what shutting down AsyncHTTPClient's client or NIO's thread pool throws (a second
    ///   shutdown, for one).
    public func shutdown() async throws {
        try await client.shutdown()
        try await fileIO.shutdownGracefully()
    }

    /// Every form: a ``FormDataRequest`` hands this transport its encoded body unspooled, which it
    /// streams from the parts.
    public var acceptedBodyForms: TransportBodyForms { .all }

    /// Starts `request`; see ``FormDataTransport/start(_:observer:)``.
    /// - Parameters:
    ///   - request: what to send; a segment body is streamed from its parts.
    ///   - observer: told of progress, the response head and the completion.
    /// - Returns: a task that cancels the send.
    public func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        let send = Send(
            request: request, observer: observer, chunkSize: configuration.chunkSize, fileIO: fileIO,
            followsRedirects: configuration.followsRedirects)
        let client = self.client
        let task = Task.detached { await send.run(on: client) }
        send.attach(task)
        return AsyncHTTPClientTransportTask(send: send)
    }
}

/// Cancels one send of an ``AsyncHTTPClientTransport``.
struct AsyncHTTPClientTransportTask: TransportTask {
    let send: Send

    func cancel() { send.cancel() }
}

/// One send: builds the AsyncHTTPClient request, watches for idleness, reports to the observer.
final class Send: @unchecked Sendable {
    // `@unchecked`: the mutable fields are touched only under `lock`; observer calls are made
    // under `observerLock`, one at a time.
    private let request: TransportRequest
    private let observer: any TransportObserver
    private let chunkSize: Int
    private let fileIO: NIOThreadPool
    private let followsRedirects: Bool
    private let lock = NSLock()
    private let observerLock = NSLock()
    private var task: Task<Void, Never>?
    private var cancelled = false
    private var timedOut = false
    private var bodyError: FormDataError?
    private var lastActivity = ContinuousClock.now
    private var handedOver: Int64 = 0
    private var reported: Int64 = 0
    private var headReceived = false
    private var completed = false

    init(
        request: TransportRequest, observer: any TransportObserver, chunkSize: Int, fileIO: NIOThreadPool,
        followsRedirects: Bool
    ) {
        self.request = request
        self.followsRedirects = followsRedirects
        self.observer = observer
        self.chunkSize = chunkSize
        self.fileIO = fileIO
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func report(_ body: () -> Void) {
        observerLock.lock()
        defer { observerLock.unlock() }
        body()
    }

    func attach(_ task: Task<Void, Never>) {
        let cancelNow = locked { () -> Bool in
            self.task = task
            return cancelled
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = locked { () -> Task<Void, Never>? in
            cancelled = true
            return self.task
        }
        task?.cancel()
    }

    private func touch() { locked { lastActivity = .now } }

    var totalLength: Int64 { Int64(clamping: request.body.length) }

    // MARK: - Running

    func run(on client: HTTPClient) async {
        // Idle time counts from when the send runs: waiting for the concurrency pool to start
        // this task is not the server's silence.
        touch()
        let result: Result<FormDataResponse, FormDataError>
        do {
            result = try await withThrowingTaskGroup(of: Result<FormDataResponse, FormDataError>?.self) { group in
                group.addTask { try await .success(self.executeFollowingRedirects(on: client)) }
                if request.timeoutInterval > 0 {
                    group.addTask {
                        try await self.watchdog()
                        return nil
                    }
                }
                defer { group.cancelAll() }
                while let outcome = try await group.next() {
                    if let outcome { return outcome }
                }
                return .failure(.cancelled)
            }
        } catch let error as FormDataError {
            result = .failure(error)
        } catch {
            result = .failure(map(error))
        }
        finish(with: result)
    }

    private func finish(with outcome: Result<FormDataResponse, FormDataError>) {
        var outcome = outcome
        let (wasCancelled, wasTimedOut, fileError) = locked { (cancelled, timedOut, bodyError) }
        if case .failure = outcome {
            if let fileError {
                outcome = .failure(Self.sendingCategory(fileError))
            } else if wasTimedOut {
                outcome = .failure(
                    .timedOut(
                        underlying: UnderlyingError(
                            domain: "FormDataKit", code: 0,
                            message: "No bytes sent or received for \(request.timeoutInterval) s")))
            } else if wasCancelled {
                outcome = .failure(.cancelled)
            }
        }
        report {
            guard !completed else { return }
            completed = true
            observer.transportDidComplete(outcome)
        }
    }

    /// Fails the send once nothing moved for the request's timeout.
    private func watchdog() async throws {
        let limit = Duration.nanoseconds(Int64(min(request.timeoutInterval, 3e8) * 1e9))  // ∞ or 1e10: no trap
        while true {
            let idle = ContinuousClock.now - locked { lastActivity }
            if idle >= limit {
                locked { timedOut = true }
                throw HTTPClientError.deadlineExceeded
            }
            try await Task.sleep(for: limit - idle)
        }
    }

    /// Sends the request, and again to where a redirect points (RedirectPolicy's rules).
    private func executeFollowingRedirects(on client: HTTPClient) async throws -> FormDataResponse {
        let policy = RedirectPolicy()
        var current = request
        var redirects = 0
        while true {
            switch try await execute(makeRequest(current), for: current, on: client) {
            case .response(var response):
                response.url = current.url
                return response
            case .redirect(let statusCode, let location):
                switch policy.decide(after: current, statusCode: statusCode, location: location, redirectsSoFar: redirects) {
                case .deliver:
                    throw FormDataError.connectionFailure(
                        underlying: UnderlyingError(
                            domain: "FormDataKit", code: statusCode, message: "A redirect without a usable Location"))
                case .refuse(let error):
                    throw error
                case .follow(let next):
                    current = next
                    redirects += 1
                }
            }
        }
    }

    /// What one exchange ended with.
    private enum Exchange {
        case response(FormDataResponse)
        case redirect(statusCode: Int, location: URL?)
    }

    private func makeRequest(_ request: TransportRequest) throws(FormDataError) -> HTTPClientRequest {
        try RequestHeaderValidation.requireValid(request.headers)
        var built = HTTPClientRequest(url: request.url.absoluteString)
        built.method = HTTPMethod(rawValue: request.method)
        for header in request.headers where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            built.headers.add(name: header.name, value: header.value)
        }
        let length = Int64(clamping: request.body.length)
        switch request.body {
        case .none:
            break
        case .data(let data):
            let counted = BodySourceSequence(
                source: BodySource(segments: [BodySegment(.bytes(data))]), chunkSize: chunkSize,
                threadPool: fileIO, onChunk: { [weak self] in self?.handedOver($0) },
                onError: { [weak self] in self?.bodyFailed($0) })
            built.body = .stream(counted, length: .known(length))
        case .file(let path, let fileLength):
            // A whole file the engine made (a compressed body): one range of its recorded size.
            let source = BodySource(segments: [
                BodySegment(
                    .file(
                        FileRange(
                            path: path, length: fileLength, expectedFileSize: fileLength)))
            ])
            built.body = .stream(sequence(over: source), length: .known(length))
        case .source(let source):
            built.body = .stream(sequence(over: source), length: .known(length))
        }
        return built
    }

    private func sequence(over source: BodySource) -> BodySourceSequence {
        BodySourceSequence(
            source: source, chunkSize: chunkSize, threadPool: fileIO,
            onChunk: { [weak self] in self?.handedOver($0) },
            onError: { [weak self] in self?.bodyFailed($0) })
    }

    private func execute(_ built: HTTPClientRequest, for sent: TransportRequest, on client: HTTPClient) async throws -> Exchange {
        touch()
        locked { handedOver = 0 }  // bytes of this exchange's body; `reported` stays (progress is monotonic)
        let response = try await client.execute(built, deadline: .distantFuture)
        touch()
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
        }
        let head = TransportResponseHead(statusCode: Int(response.status.code), headers: headers)
        if followsRedirects, let location = response.headers.first(name: "Location"),
            RedirectPolicy.isRedirect(statusCode: head.statusCode, hasLocation: true)
        {
            for try await _ in response.body { touch() }  // the redirect's own body is not kept
            return .redirect(
                statusCode: head.statusCode,
                location: URL(string: location, relativeTo: sent.url)?.absoluteURL)
        }
        let total = totalLength
        let pending = locked { () -> (Int64, Int64)? in
            headReceived = true
            let soFar = min(handedOver, total)
            guard soFar > reported else { return nil }
            defer { reported = soFar }
            return (soFar - reported, soFar)
        }
        report {
            if let (sent, soFar) = pending {
                observer.transportDidSendBodyData(bytesSent: sent, totalBytesSent: soFar, totalBytesExpected: total)
            }
            observer.transportDidReceiveResponse(head)
        }
        // A gzip body is inflated as it arrives (the compressed body is never held whole), bounded
        // by the decompressed-size limit; the raw bytes are bounded by maximumResponseSize.
        let gzip = head.header("Content-Encoding")?.lowercased().contains("gzip") == true
        let inflater = gzip ? try GzipInflater(outputLimit: request.maximumDecompressedResponseSize) : nil
        var body = Data()
        var rawBytes: UInt64 = 0
        for try await chunk in response.body {
            touch()
            rawBytes += UInt64(chunk.readableBytes)
            guard rawBytes <= request.maximumResponseSize else {
                throw FormDataError.responseTooLarge(limit: request.maximumResponseSize)
            }
            if let inflater {
                do {
                    _ = try chunk.withUnsafeReadableBytes { bytes in
                        try inflater.decompress(bytes) { (piece) throws(FormDataError) in body.append(contentsOf: piece) }
                    }
                } catch let error as FormDataError {
                    throw FormDataError.compression(underlying: error)
                }
            } else {
                body.append(contentsOf: chunk.readableBytesView)
            }
        }
        if let inflater, rawBytes > 0 {
            do throws(FormDataError) { try inflater.finish() } catch { throw FormDataError.compression(underlying: error) }
        }
        switch ResponseInflation.response(
            head: head, body: body, limit: request.maximumDecompressedResponseSize,
            alreadyDecoded: true)
        {
        case .success(let value): return .response(value)
        case .failure(let error): throw error
        }
    }

    // MARK: - Body callbacks

    /// A chunk of `count` bytes was handed to the client. The bytes that complete the body are
    /// held back until the response head arrives.
    private func handedOver(_ count: Int) {
        let total = totalLength
        let toReport = locked { () -> (Int64, Int64)? in
            lastActivity = .now
            handedOver += Int64(count)
            let soFar = min(handedOver, total)
            if soFar >= total && !headReceived { return nil }
            guard soFar > reported else { return nil }
            defer { reported = soFar }
            return (soFar - reported, soFar)
        }
        guard let (sent, soFar) = toReport else { return }
        report {
            observer.transportDidSendBodyData(bytesSent: sent, totalBytesSent: soFar, totalBytesExpected: total)
        }
    }

    private func bodyFailed(_ error: FormDataError) {
        locked { if bodyError == nil { bodyError = error } }
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
