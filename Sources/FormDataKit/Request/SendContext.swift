import Foundation

/// One send of a ``FormDataRequest``: runs the attempts (retries after timeouts), turns transport
/// events into state changes and ordered callbacks on its serial ``queue``.
final class SendContext: TransportObserver, @unchecked Sendable {
    // `@unchecked`: the mutable fields below are touched only under `lock`.
    let request: FormDataRequest
    let queue = DispatchQueue(label: "FormDataKit.FormDataRequest.callbacks")
    private let completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    private let lock = NSLock()
    private var transportRequest: TransportRequest?
    private var bodyFile: TemporaryFile?
    private var reportedBytes: Int64 = 0
    private var finished = false

    /// The length of the body being sent (0 before the build).
    private var bodyLength: UInt64 { locked { transportRequest?.body.length ?? 0 } }

    /// Where the delegate and the blocks are called: the request's ``FormDataRequest/callbackQueue``,
    /// or nil for this context's own ``queue``.
    private let callbackQueue: DispatchQueue?
    /// Where callbacks go instead when ``FormDataRequest/startSynchronous()`` waits on the
    /// callback queue itself (it runs them).
    private let inbox: CallbackInbox?

    init(
        request: FormDataRequest, inbox: CallbackInbox? = nil,
        completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    ) {
        self.request = request
        self.completion = completion
        self.inbox = inbox
        self.callbackQueue = request.effectiveCallbackQueue
    }

    /// Runs `callbacks` where the delegate and blocks go: on the callback queue when there is one
    /// (in order: every call is made from ``queue``, one after another, and each queue is FIFO),
    /// else right here on ``queue``.
    private func deliver(_ callbacks: @escaping @Sendable () -> Void) {
        if let inbox {
            inbox.post(callbacks)
        } else if let callbackQueue {
            callbackQueue.async(execute: callbacks)
        } else {
            callbacks()
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Builds the body, reports the start and sends the first attempt. Runs on ``queue``.
    func begin() {
        if request.sending.withLock({ $0.current.cancelRequested }) {
            finish(.failure(.cancelled))
            return
        }
        do {
            try request.buildPostBody()
        } catch let error as FormDataError {
            finish(.failure(.whileSending(error)))
            return
        } catch {
            // buildPostBody only throws FormDataError; anything else is reported as a connection-
            // independent creation failure rather than dropped.
            finish(.failure(.unableToCreateRequest(underlying: UnderlyingError(error))))
            return
        }
        let prepared: (TransportRequest, TemporaryFile?)
        switch request.makeTransportRequest() {
        case .failure(let error):
            finish(.failure(error))
            return
        case .success(let value):
            prepared = value
        }
        locked {
            transportRequest = prepared.0
            bodyFile = prepared.1
        }
        // Never 0: an empty body counts as one unit, completed when the request finishes.
        let total = max(1, Int64(clamping: prepared.0.body.length))
        let (delegate, started) = request.sending.withLock { state in
            state.current.uploadProgress.completedUnitCount = 0
            state.current.uploadProgress.totalUnitCount = total
            return (state.callbacks.delegate.value, state.callbacks.startedBlock)
        }
        let request = self.request
        deliver {
            delegate?.requestStarted(request)
            started?()
        }
        attempt()
    }

    /// Hands the request to the transport (again, after a timeout).
    private func attempt() {
        guard let transportRequest = locked({ transportRequest }) else { return }
        let transport = request.transport
        let task = transport.start(transportRequest, observer: self)
        let cancelNow = request.sending.withLock { state -> Bool in
            state.current.currentTask = task
            return state.current.cancelRequested
        }
        if cancelNow { task.cancel() }
    }

    // MARK: - TransportObserver

    func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64) {
        let increment: Int64 = locked {
            guard !finished, totalBytesSent > reportedBytes else { return 0 }
            defer { reportedBytes = totalBytesSent }
            return totalBytesSent - reportedBytes
        }
        guard increment > 0 else { return }
        reportProgress(increment)
    }

    func transportDidReceiveResponse(_ head: TransportResponseHead) {
        let delegate = request.sending.withLock { state in
            state.results.responseStatusCode = head.statusCode
            state.results.responseReasonPhrase = head.reasonPhrase
            state.results.responseHeaders = head.headers
            return state.callbacks.delegate.value
        }
        let request = self.request
        queue.async { self.deliver { delegate?.request(request, didReceiveResponseHeaders: head.headers) } }
    }

    func transportDidComplete(_ result: Result<FormDataResponse, FormDataError>) {
        if case .failure(.timedOut) = result {
            let retry = request.sending.withLock { state -> Bool in
                guard !state.current.cancelRequested, state.results.retryCount < state.settings.numberOfTimesToRetryOnTimeout else {
                    return false
                }
                state.results.retryCount += 1
                state.current.currentTask = nil
                return true
            }
            if retry {
                let sentSoFar: Int64 = locked {
                    defer { reportedBytes = 0 }
                    return reportedBytes
                }
                resetProgress(removing: sentSoFar)
                queue.async { self.attempt() }
                return
            }
        }
        var result = result
        if case .failure = result, request.sending.withLock({ $0.current.cancelRequested }) {
            result = .failure(.cancelled)
        }
        finish(result)
    }

    // MARK: - Progress

    private func reportProgress(_ increment: Int64) {
        let (delegate, block, total) = request.sending.withLock { state in
            state.results.totalBytesSent += UInt64(increment)
            let progress = state.current.uploadProgress
            progress.completedUnitCount = min(progress.totalUnitCount, Int64(clamping: state.results.totalBytesSent))
            return (state.callbacks.delegate.value, state.callbacks.bytesSentBlock, self.bodyLength)
        }
        let request = self.request
        queue.async {
            self.deliver {
                delegate?.request(request, didSendBytes: increment)
                block?(UInt64(increment), total)
            }
        }
    }

    private func resetProgress(removing sentSoFar: Int64) {
        let delegate = request.sending.withLock { state in
            state.results.totalBytesSent = 0
            state.current.uploadProgress.completedUnitCount = 0
            return state.callbacks.delegate.value
        }
        guard sentSoFar > 0 else { return }
        let request = self.request
        queue.async { self.deliver { delegate?.request(request, didSendBytes: -sentSoFar) } }
    }

    // MARK: - Completion

    /// Records the outcome, removes the temporary body file, and reports finished or failed.
    private func finish(_ result: Result<FormDataResponse, FormDataError>) {
        let alreadyFinished: Bool = locked {
            defer { finished = true }
            return finished
        }
        guard !alreadyFinished else { return }
        if case .success = result {
            // Count bytes the transport sent without reporting them (tiny bodies), so the
            // increments add up to the body length and progress ends at exactly 1.0.
            let total = locked { transportRequest?.body.length ?? 0 }
            let reported = UInt64(max(0, locked { reportedBytes }))
            if total > reported {
                locked { reportedBytes = Int64(total) }
                reportProgress(Int64(total - reported))
            }
        }
        request.releaseSentBody(locked { bodyFile })
        locked { bodyFile = nil }
        if case .success(let response) = result, let final = response.url { request.followRedirect(to: final) }
        let (delegate, block) = request.sending.withLock { state -> ((any FormDataRequestDelegate)?, (@Sendable () -> Void)?) in
            let progress = state.current.uploadProgress
            switch result {
            case .success(let response):
                state.results.error = nil
                state.results.responseStatusCode = response.statusCode
                state.results.responseReasonPhrase = response.reasonPhrase
                state.results.responseHeaders = response.headers
                state.results.responseData = response.body
                state.results.responseURL = response.url
                state.results.authentication = response.authentication
                progress.completedUnitCount = progress.totalUnitCount
            case .failure(let error):
                state.results.error = error
            }
            state.current.inFlight = false
            state.current.currentTask = nil
            if case .success = result { return (state.callbacks.delegate.value, state.callbacks.completionBlock) }
            return (state.callbacks.delegate.value, state.callbacks.failedBlock)
        }
        let request = self.request
        let completion = self.completion
        queue.async {
            // The completion (what start() and startSynchronous() wait for) runs after the
            // callbacks, on the same queue.
            self.deliver {
                switch result {
                case .success: delegate?.requestFinished(request)
                case .failure: delegate?.requestFailed(request)
                }
                block?()
                completion?(result)
            }
        }
    }
}
