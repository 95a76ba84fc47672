import FormDataKitBody
import FormDataKitWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One send as a façade sees it — what `FormDataRequest`, `NetworkQueue`, FormDataKitAF's
/// managers and operations, and a façade of your own need from the send driver, in one place:
///
/// - **Cumulative progress**: `UploadProgress` counts the body bytes on the wire for the
///   current attempt (monotonic, exactly the body's length when the send succeeds; 0 again when
///   a timed-out attempt is taken back), and each `Event/responseBody(_:received:expected:)`
///   carries the response's bytes so far.
/// - **The `HTTPURLResponse`**, made once per answer, when a façade first asks
///   (`httpResponse`).
/// - **The body's temporary file**: once given to `start(_:bodyFile:options:)`,
///   `end(_:bodyFile:)` or `abandon(bodyFile:)` it is removed when the send ends, however it
///   ends.
/// - **Cancel before start**: `cancel()` at any time; a send cancelled before it started ends
///   with `FormDataError/cancelled` when it would start, unsent.
/// - **Ordered callbacks**: `callbacks` is where the façade runs its user's code.
///
/// Events come to `onEvent` in order, one at a time: from the driver (possibly on a transport's
/// thread: record them and `deliver(internalOnly:_:)` user code), or on the caller's thread for
/// a send that ends unsent. `Event/finished(_:)` comes exactly once, last.
///
/// ```swift
/// let send = FacadeSend(transport: CurlTransport.shared) { event in
///     if case .finished(let result) = event { print(result) }
/// }
/// send.start(request, bodyFile: nil)  // a TransportRequest, its body in a form the transport takes
/// ```
public final class FacadeSend: TransportTask, @unchecked Sendable {
    // `@unchecked`: mutable state is in `state` (a lock), but `onEvent`, touched only by the
    // events, which come one at a time.

    /// What a façade hears of its send.
    public enum Event: Sendable {
        /// Body bytes went out (also when a timed-out attempt's bytes are taken back).
        case uploadProgress(UploadProgress)
        /// The send starts again (`retryCount` so far).
        case retrying(retryCount: Int)
        /// The head of the response that answers the send (`httpResponse` is it, as Foundation's type).
        case responseHead(TransportResponseHead)
        /// Decoded response body bytes (with `Options/streamsResponseBody`): `received` bytes of
        /// this response so far, of `expected` (its `Content-Length`, nil when it has none).
        case responseBody(Data, received: UInt64, expected: UInt64?)
        /// The send ended: the response (its body unless `Options/keepsResponseBody` is false),
        /// or why it failed.
        case finished(Result<FormDataResponse, FormDataError>)
    }

    /// The upload's progress.
    public struct UploadProgress: Sendable, Equatable {
        /// Body bytes of this attempt on the wire.
        public var sent: UInt64
        /// The body's length; 0 while it is not known (a stream of unknown length).
        public var total: UInt64
        /// The change since the last report: negative when a timed-out attempt's bytes are taken
        /// back before it is sent again (ASIHTTPRequest told its delegate so).
        public var delta: Int64
    }

    /// How the send runs.
    public struct Options: Sendable {
        /// How many times a timed-out send starts again (without `retryPolicy`).
        public var retriesOnTimeout = 0
        /// The rules every retry follows; nil: `retriesOnTimeout`, ASIHTTPRequest's.
        public var retryPolicy: RetryPolicy?
        /// Whether response body bytes are reported as they arrive (`Event/responseBody(_:received:expected:)`).
        public var streamsResponseBody = false
        /// Whether the finished response keeps its body (false: it was only streamed).
        public var keepsResponseBody = true
        /// How far the consumer of the streamed body is behind: the transport pauses receiving
        /// while it withholds demand (nil: it never does).
        package var responseDemand: ResponseDemand?

        /// The defaults: no retry, the body kept, nothing streamed.
        public init() {}
    }

    private enum Phase {
        /// Not started yet; `cancelled`: a cancel came first.
        case waiting(cancelled: Bool)
        case sending(SendDriver)
        case ended
    }

    private struct State {
        var phase = Phase.waiting(cancelled: false)
        var bodyLength: UInt64 = 0
        var received: UInt64 = 0
        var expected: UInt64?
        var answer: (head: TransportResponseHead, url: URL?)?
        var httpResponse: HTTPURLResponse?
        var resumption: (url: URL?, count: Int) = (nil, 0)
    }

    /// Where the façade runs its user's code, in order.
    public let callbacks: OrderedCallbacks
    private let transport: any FormDataTransport
    /// The façade's handler; dropped after the last event, so nothing of an ended send is kept
    /// (the handler holds the façade's send, which holds this).
    private var onEvent: (@Sendable (Event) -> Void)?
    private let state = Locked(State())

    /// A send through `transport`, not started.
    /// - Parameters:
    ///   - transport: what carries out its exchanges.
    ///   - callbacks: where the façade runs its user's code (a new mailbox unless given).
    ///   - onEvent: the send's events, in order, one at a time; return quickly.
    public init(
        transport: any FormDataTransport, callbacks: OrderedCallbacks = OrderedCallbacks(),
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.transport = transport
        self.callbacks = callbacks
        self.onEvent = onEvent
    }

    /// Sends `request`, unless the send was cancelled or has ended (then it ends, or stays
    /// ended, unsent). What reaches the wire is checked by the driver, whichever façade built it.
    /// - Parameters:
    ///   - request: the request, its body in a form the transport takes.
    ///   - bodyFile: the temporary file the body is read from: the send's from now on, removed when it ends.
    ///   - options: retries and what happens to the response body.
    public func start(_ request: TransportRequest, bodyFile: TemporaryFile?, options: Options = Options()) {
        var onResponseBody: (@Sendable (Data) -> Void)?
        if options.streamsResponseBody { onResponseBody = { [self] chunk in received(chunk) } }
        let driver = SendDriver(
            request: request, transport: transport, bodyFile: bodyFile, retriesOnTimeout: options.retriesOnTimeout,
            retryPolicy: options.retryPolicy, onResponseBody: onResponseBody, keepsResponseBody: options.keepsResponseBody,
            responseDemand: options.responseDemand
        ) { [self] event in handle(event) }
        let cancelled = state.withLock { state -> Bool? in
            guard case .waiting(let cancelled) = state.phase else { return nil }
            state.bodyLength = request.body.knownLength ?? 0
            if cancelled {
                state.phase = .ended
            } else {
                state.phase = .sending(driver)
            }
            return cancelled
        }
        switch cancelled {
        case nil:
            bodyFile?.remove()
        case true?:
            bodyFile?.remove()
            finished(.failure(.cancelled))
        case false?:
            driver.start()
        }
    }

    /// Ends the send unsent with `error` (the request could not be built, or was cancelled before
    /// it was), unless it has started or ended.
    /// - Parameters:
    ///   - error: why.
    ///   - bodyFile: a temporary body file already made for it: removed.
    public func end(_ error: FormDataError, bodyFile: TemporaryFile? = nil) {
        bodyFile?.remove()
        let ends = state.withLock { state -> Bool in
            guard case .waiting = state.phase else { return false }
            state.phase = .ended
            return true
        }
        if ends { finished(.failure(error)) }
    }

    /// Ends the send unsent without an event, unless it has started or ended: the façade reports
    /// why itself (an error of its own types: a request its serializer could not build).
    /// - Parameter bodyFile: a temporary body file already made for it: removed.
    /// - Returns: whether it ended now (false: it had started or ended already).
    @discardableResult
    public func abandon(bodyFile: TemporaryFile? = nil) -> Bool {
        bodyFile?.remove()
        let ends = state.withLock { state -> Bool in
            guard case .waiting = state.phase else { return false }
            state.phase = .ended
            return true
        }
        if ends { onEvent = nil }
        return ends
    }

    /// Cancels the send: it ends with `FormDataError/cancelled` at once (its exchange is
    /// stopped), or when it would start if it has not yet. No effect once it has ended.
    public func cancel() {
        let driver = state.withLock { state -> SendDriver? in
            switch state.phase {
            case .waiting: state.phase = .waiting(cancelled: true)
            case .sending(let driver): return driver
            case .ended: break
            }
            return nil
        }
        driver?.cancel()
    }

    /// Whether `cancel()` came before the send started.
    public var isCancelledBeforeStart: Bool {
        state.withLock { if case .waiting(cancelled: true) = $0.phase { true } else { false } }
    }

    /// The response that answers the send, as Foundation's type (its final URL, after redirects),
    /// made once, when first asked; nil until its head arrived.
    public var httpResponse: HTTPURLResponse? {
        state.withLock { state in
            if let made = state.httpResponse { return made }
            guard let (head, url) = state.answer, let url else { return nil }
            state.httpResponse = HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: "HTTP/1.1", headerFields: head.headers)
            return state.httpResponse
        }
    }

    /// The upload's resumption URL (from the server's `104`) and how many times it was resumed
    /// (kept once the send has ended).
    public var uploadResumption: (url: URL?, count: Int) {
        let (driver, kept) = state.withLock { state -> (SendDriver?, (url: URL?, count: Int)) in
            if case .sending(let driver) = state.phase { return (driver, state.resumption) }
            return (nil, state.resumption)
        }
        return driver?.uploadResumption ?? kept
    }

    /// Runs `work` in `callbacks`, after everything delivered before it.
    /// - Parameters:
    ///   - internalOnly: `work` calls no user code (see `OrderedCallbacks/deliver(internalOnly:_:)`).
    ///   - work: what to run.
    public func deliver(internalOnly: Bool = false, _ work: @escaping @Sendable () -> Void) {
        callbacks.deliver(internalOnly: internalOnly, work)
    }

    // MARK: - The driver's events

    private func handle(_ event: SendDriver.Event) {
        switch event {
        case .progress(let sent, let delta):
            let total = state.withLock { $0.bodyLength }
            onEvent?(.uploadProgress(UploadProgress(sent: UInt64(clamping: sent), total: total, delta: delta)))
        case .retrying(let count):
            onEvent?(.retrying(retryCount: count))
        case .responseHead(let head, let url):
            state.withLock { state in
                state.answer = (head, url)
                state.httpResponse = nil
                state.received = 0
                state.expected = head.contentLength
            }
            onEvent?(.responseHead(head))
        case .finished(let result, _):
            let driver = state.withLock { state -> SendDriver? in
                if case .success(let response) = result {
                    if state.answer == nil {
                        state.answer = (
                            TransportResponseHead(
                                statusCode: response.statusCode, headers: response.headers, reasonPhrase: response.reasonPhrase),
                            response.url
                        )
                    } else if let url = response.url, state.answer?.url != url {
                        state.answer?.url = url
                        state.httpResponse = nil
                    }
                }
                defer { state.phase = .ended }
                if case .sending(let driver) = state.phase { return driver }
                return nil
            }
            if let driver { state.withLock { $0.resumption = driver.uploadResumption } }
            finished(result)
        }
    }

    /// The last event.
    private func finished(_ result: Result<FormDataResponse, FormDataError>) {
        let onEvent = self.onEvent
        self.onEvent = nil
        onEvent?(.finished(result))
    }

    private func received(_ chunk: Data) {
        let (received, expected) = state.withLock { state -> (UInt64, UInt64?) in
            state.received += UInt64(chunk.count)
            return (state.received, state.expected)
        }
        onEvent?(.responseBody(chunk, received: received, expected: expected))
    }
}
