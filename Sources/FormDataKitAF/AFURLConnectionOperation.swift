import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Notification.Name {
    /// Posted when an ``AFURLConnectionOperation`` starts or resumes (object: the operation);
    /// AFNetworking 2's `AFNetworkingOperationDidStartNotification`.
    public static let AFNetworkingOperationDidStart = Notification.Name("com.alamofire.networking.operation.start")
    /// Posted when an ``AFURLConnectionOperation`` finishes or is paused (object: the
    /// operation); AFNetworking 2's `AFNetworkingOperationDidFinishNotification`.
    public static let AFNetworkingOperationDidFinish = Notification.Name("com.alamofire.networking.operation.finish")
}

/// One request as an `Operation`, in AFNetworking 2's `AFURLConnectionOperation` shape: start it
/// (or add it to an `OperationQueue`), follow its upload and download progress, pause and resume
/// it, read ``responseData`` when it has finished.
///
/// Sent by FormDataKit's send driver through ``transport`` — the same path as
/// `AFHTTPSessionManager` and `FormDataRequest` — with the request's body as
/// `AFHTTPRequestSerializer` built it (a multipart body streamed from its parts, exact
/// `Content-Length`), and `FormDataRequest.defaultUserAgentString` as its `User-Agent` when the
/// request has none. No thread or run loop is made per operation: its events run in order in
/// one serial mailbox on the shared global queue, across pauses. Thread-safe.
open class AFURLConnectionOperation: Operation, @unchecked Sendable {
    // `@unchecked`: mutable state is in `state` (a lock); Operation's own state is thread-safe.

    /// Upload progress: bytes written since the last call, in all, and the body's length.
    public typealias UploadProgressBlock =
        @Sendable (_ bytesWritten: UInt, _ totalBytesWritten: Int64, _ totalBytesExpectedToWrite: Int64)
        -> Void
    /// Download progress: bytes read since the last call, in all, and the expected length (-1:
    /// the response has no `Content-Length`).
    public typealias DownloadProgressBlock =
        @Sendable (_ bytesRead: UInt, _ totalBytesRead: Int64, _ totalBytesExpectedToRead: Int64)
        -> Void

    enum Phase { case ready, executing, paused, finished }

    struct State {
        var phase = Phase.ready
        /// Set once, by the call that finishes the operation.
        var ending = false
        /// Which send is current: events of a send stopped by ``pause()`` are ignored.
        var attempt = 0
        /// The current send (the façade adapter), from the moment the operation runs.
        var send: FacadeSend?
        var response: HTTPURLResponse?
        var responseData: Data?
        var error: (any Error)?
        var uploadProgress: UploadProgressBlock?
        var downloadProgress: DownloadProgressBlock?
        var outputStream: OutputStream?
        var securityPolicy = AFSecurityPolicy.default()
        var retryPolicy: RetryPolicy?
        /// Resumable uploads (``AFURLConnectionOperation/shouldResumeInterruptedUploads``).
        var resumesInterruptedUploads = false
        var maximumUploadResumptions = 3
        var credential: URLCredential?
        var completionQueue: DispatchQueue?
        /// Bytes already written to ``outputStream`` (a resumed send skips them).
        var streamed: Int64 = 0
        var skipping: Int64 = 0
    }

    /// The request sent.
    public let request: URLRequest
    /// What sends it (a FormDataKit addition): `FormDataRequest.defaultTransport` unless given.
    public let transport: any FormDataTransport
    let state = Locked(State())
    /// The operation's events and callbacks, in order, one at a time (every send's).
    let callbacks = OrderedCallbacks()

    /// An operation for `request`, sent through `FormDataRequest.defaultTransport`.
    /// - Parameter request: the request (its body as a serializer built it).
    public convenience init(request: URLRequest) {
        self.init(request: request, transport: FormDataRequest.defaultTransport)
    }

    /// An operation for `request`, sent through `transport`.
    /// - Parameters:
    ///   - request: the request.
    ///   - transport: what sends it.
    public init(request: URLRequest, transport: any FormDataTransport) {
        self.request = request
        self.transport = transport
        super.init()
    }

    // MARK: - State

    /// True: the request is sent on the transport's threads.
    open override var isAsynchronous: Bool { true }
    /// Whether the request is being sent (false while paused).
    open override var isExecuting: Bool { state.withLock { $0.phase == .executing } }
    /// Whether it has finished, failed or was cancelled.
    open override var isFinished: Bool { state.withLock { $0.phase == .finished } }
    /// Whether ``pause()`` stopped it (until ``resume()``).
    public var isPaused: Bool { state.withLock { $0.phase == .paused } }

    /// The response, once its head arrived.
    public var response: HTTPURLResponse? { state.withLock { $0.response } }
    /// The response body, once finished (nil when it went to ``outputStream``).
    public var responseData: Data? { state.withLock { $0.responseData } }
    /// Why it failed: an `NSURLErrorDomain` error for sending failures and cancels.
    open var error: (any Error)? { state.withLock { $0.error } }
    /// ``responseData`` decoded with the response's charset, ISO Latin 1 without one (as AF 2 did).
    public var responseString: String? {
        let (data, response) = state.withLock { ($0.responseData, $0.response) }
        guard let data else { return nil }
        var headers: [String: String] = [:]
        for (name, value) in response?.allHeaderFields ?? [:] { headers["\(name)"] = "\(value)" }
        return FormDataResponse(statusCode: response?.statusCode ?? 0, headers: headers, body: data).string
    }

    /// Where the response body is written as it arrives instead of ``responseData`` (opened when
    /// the operation starts, closed when it ends). Set it before starting.
    public var outputStream: OutputStream? {
        get { state.withLock { $0.outputStream } }
        set { state.withLock { $0.outputStream = newValue } }
    }

    /// The TLS checks (curl transport), as `AFHTTPSessionManager`'s.
    public var securityPolicy: AFSecurityPolicy {
        get { state.withLock { $0.securityPolicy } }
        set { state.withLock { $0.securityPolicy = newValue } }
    }

    /// Credentials answered to an authentication challenge (user and password).
    public var credential: URLCredential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.credential = newValue } }
    }

    /// Where completion callbacks run; nil: a global queue.
    public var completionQueue: DispatchQueue? {
        get { state.withLock { $0.completionQueue } }
        set { state.withLock { $0.completionQueue = newValue } }
    }

    /// Sets the upload progress block (called on the operation's serial mailbox).
    /// - Parameter block: told of each batch of body bytes written.
    public func setUploadProgressBlock(_ block: UploadProgressBlock?) { state.withLock { $0.uploadProgress = block } }

    /// Sets the download progress block (called on the operation's serial mailbox).
    /// - Parameter block: told of each piece of the response body read.
    public func setDownloadProgressBlock(_ block: DownloadProgressBlock?) { state.withLock { $0.downloadProgress = block } }

    // MARK: - Running

    /// Sends the request; an operation cancelled before it started finishes at once with the
    /// cancelled error, unsent. A second call does nothing.
    open override func start() {
        guard let send = run(from: .ready) else { return }
        changing { _ in }
        if isCancelled {
            // Operation's cancel before its start: finished at once, unsent.
            send.abandon()
            return finish(.failure(FormDataError.cancelled), attempt: state.withLock { $0.attempt })
        }
        state.withLock { $0.outputStream?.open() }
        NotificationCenter.default.post(name: .AFNetworkingOperationDidStart, object: self)
        start(send)
    }

    /// Cancels it: a running or paused operation finishes with the cancelled error
    /// (`NSURLErrorCancelled`); one not started finishes so when it starts.
    open override func cancel() {
        super.cancel()
        let (phase, send, attempt) = state.withLock { ($0.phase, $0.send, $0.attempt) }
        switch phase {
        case .executing: send?.cancel()
        case .paused: finish(.failure(FormDataError.cancelled), attempt: attempt)
        case .ready, .finished: break
        }
    }

    /// Stops the transfer; ``resume()`` sends the request again (AF 2's pause). Posts
    /// `Notification.Name.AFNetworkingOperationDidFinish`.
    public func pause() {
        let send = state.withLock { state -> FacadeSend? in
            guard state.phase == .executing else { return nil }
            state.phase = .paused
            state.attempt += 1
            defer { state.send = nil }
            return state.send
        }
        guard let send else { return }
        changing { _ in }
        send.cancel()
        NotificationCenter.default.post(name: .AFNetworkingOperationDidFinish, object: self)
    }

    /// Sends a paused request again from the start; a body already written to ``outputStream``
    /// is not written twice (the new response's first bytes, as many as were written, are skipped).
    public func resume() {
        guard let send = run(from: .paused) else { return }
        changing { _ in }
        NotificationCenter.default.post(name: .AFNetworkingOperationDidStart, object: self)
        start(send)
    }

    /// Runs `change` with KVO for `isExecuting` and `isFinished` around it (the queue watches them).
    func changing(_ change: (inout State) -> Void) {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        state.withLock(change)
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}
