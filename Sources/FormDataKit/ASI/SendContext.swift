import FormDataKitBody
import FormDataKitEngine
import FormDataKitWire
import Foundation

/// One send of a ``FormDataRequest``: builds the body, hands the request to a ``SendDriver``,
/// and turns the driver's events into the request's state and its ordered callbacks (delegate,
/// blocks, then the completion).
final class SendContext: @unchecked Sendable {
    // `@unchecked`: the lets are set in init; `bodyLength` and `receiving` are written once,
    // before the driver starts; `usedCallbackQueue` is touched by one `deliver` at a time.
    let request: FormDataRequest
    private let completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    /// Where the delegate and the blocks are called: the request's ``FormDataRequest/callbackQueue``,
    /// or nil for where the driver delivers its events (in order, one at a time).
    private let callbackQueue: DispatchQueue?
    /// Where callbacks go instead when ``FormDataRequest/startSynchronous()`` waits on the
    /// callback queue itself (it runs them).
    private let inbox: CallbackInbox?
    private let bodyLength = Locked<UInt64>(0)
    /// The response body as it arrives, when something takes it (set before the driver starts).
    var receiving: ResponseReceiving?
    /// Where callbacks run when there is no callback queue: in order, on the shared global
    /// queue, never on the transport's thread the driver's events arrive on. Only an internal
    /// step (a queue's bookkeeping, the completion a waiter resumes on) runs on the thread that
    /// reports it, when nothing is pending here (``deliver(internalOnly:_:)``).
    private let callbacks = SerialMailbox()
    /// Whether this send has put work on ``callbackQueue`` (an internal step must then follow it).
    /// Touched only by ``deliver(internalOnly:_:)``, whose calls come one at a time: from
    /// ``begin()`` before the driver starts, then from the driver's events, which it serializes.
    private var usedCallbackQueue = false

    init(
        request: FormDataRequest, inbox: CallbackInbox? = nil,
        completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    ) {
        self.request = request
        self.completion = completion
        self.inbox = inbox
        self.callbackQueue = request.effectiveCallbackQueue
    }

    /// Runs `work` where the delegate and blocks go: on the callback queue when there is one (in
    /// order: every call is made in order, and each queue is FIFO), else in this send's mailbox
    /// on the global queue. `internalOnly`: nothing of the caller's runs (no delegate, no block:
    /// only the queue's bookkeeping and a completion that resumes a waiter), so it may run right
    /// here when nothing is pending — in the mailbox, and on the callback queue, which it follows
    /// once this send has put anything there.
    func deliver(internalOnly: Bool = false, _ work: @escaping @Sendable () -> Void) {
        if let inbox {
            inbox.post(work)
        } else if let callbackQueue, !internalOnly || usedCallbackQueue {
            usedCallbackQueue = true
            callbackQueue.async(execute: work)
        } else if internalOnly {
            callbacks.runHereIfIdle(work)
        } else {
            callbacks.post(work)
        }
    }

    /// Builds the body, reports the start and starts the driver.
    func begin() {
        // A transport that reads the files right here takes the descriptors its build opened.
        if request.transport is any ReadsBodyWhereStarted {
            FilesOpenedByBuild.collect { buildAndStart() }
        } else {
            buildAndStart()
        }
    }

    private func buildAndStart() {
        if request.sending.withLock({ $0.current.cancelRequested }) {
            finish(.failure(.cancelled), bodyFile: nil)
            return
        }
        do {
            try request.buildPostBody()
        } catch let error as FormDataError {
            finish(.failure(.whileSending(error)), bodyFile: nil)
            return
        } catch {
            // buildPostBody only throws FormDataError; anything else is reported as a connection-
            // independent creation failure rather than dropped.
            finish(.failure(.unableToCreateRequest(underlying: UnderlyingError(error))), bodyFile: nil)
            return
        }
        let (transportRequest, bodyFile): (TransportRequest, TemporaryFile?)
        switch request.makeTransportRequest() {
        case .failure(let error):
            finish(.failure(error), bodyFile: nil)
            return
        case .success(let value):
            (transportRequest, bodyFile) = value
        }
        bodyLength.withLock { $0 = transportRequest.body.length }
        // Never 0: an empty body counts as one unit, completed when the request finishes.
        let total = max(1, Int64(clamping: transportRequest.body.length))
        let (callbacks, settings, membership) = request.sending.withLock { state in
            state.current.uploadProgress.completedUnitCount = 0
            state.current.uploadProgress.totalUnitCount = total
            return (state.callbacks, state.settings, state.queue)
        }
        let receiving: ResponseReceiving?
        if ResponseReceiving.isNeeded(callbacks, settings, queued: membership.observer != nil) {
            do throws(FormDataError) {
                receiving = try ResponseReceiving(callbacks: callbacks, settings: settings)
            } catch {
                bodyFile?.remove()
                request.forgetSentBody(bodyFile)
                finish(.failure(.whileSending(error)), bodyFile: nil)
                return
            }
        } else {
            receiving = nil
        }
        self.receiving = receiving
        let request = self.request
        let delegate = callbacks.delegate.value
        let (started, sizeBlock) = (callbacks.startedBlock, callbacks.uploadSizeIncrementedBlock)
        let length = transportRequest.body.length
        // ASI's order: the delegate, the block, then the queue; the upload size after the start
        // (a queue sized the batch already: its requests do not report it, as in ASI).
        let sizeBlockRuns = membership.observer == nil && sizeBlock != nil
        if delegate != nil || started != nil || membership.observer != nil || sizeBlock != nil {
            deliver(internalOnly: delegate == nil && started == nil && !sizeBlockRuns) {
                delegate?.requestStarted(request)
                started?()
                membership.observer?.requestStarted(request, id: membership.id)
                if membership.observer == nil { sizeBlock?(Int64(clamping: length)) }
            }
        }
        var onResponseBody: (@Sendable (Data) -> Void)?
        if receiving != nil { onResponseBody = { [self] chunk in received(chunk) } }
        let driver = SendDriver(
            request: transportRequest, transport: request.transport, bodyFile: bodyFile,
            retriesOnTimeout: settings.numberOfTimesToRetryOnTimeout, retryPolicy: settings.retryPolicy, onResponseBody: onResponseBody,
            keepsResponseBody: receiving?.keepsBody ?? true, responseDemand: receiving?.demand
        ) { [self] event in handle(event, bodyFile: bodyFile) }
        receiving?.cancelSend = { [weak driver] in driver?.cancel() }
        let cancelNow = request.sending.withLock { state -> Bool in
            state.current.currentTask = driver
            return state.current.cancelRequested
        }
        if cancelNow { driver.cancel() }
        BodyBuildingThread.run { driver.start() }
    }

    /// One event of the driver (in order, one at a time).
    private func handle(_ event: SendDriver.Event, bodyFile: TemporaryFile?) {
        switch event {
        case .progress(let delta):
            reportProgress(delta)
        case .retrying(let count):
            request.sending.withLock { $0.results.retryCount = count }
        case .responseHead(let head):
            let (callbacks, membership) = request.sending.withLock { state in
                state.results.responseStatusCode = head.statusCode
                state.results.responseReasonPhrase = head.reasonPhrase
                state.results.responseHeaders = head.headers
                return (state.callbacks, state.queue)
            }
            let expected = receiving?.responseHead(head)
            reportResponseHead(head, expected: expected, callbacks: callbacks, membership: membership)
        case .finished(let result, _):
            finish(result, bodyFile: bodyFile)
        }
    }

    /// Body bytes went out (`delta` more), or a timed-out attempt's bytes are taken back
    /// (negative: ASIHTTPRequest reported that to the delegate only).
    private func reportProgress(_ delta: Int64) {
        let total = bodyLength.current
        let (delegate, block, membership, sentSoFar) = request.sending.withLock { state in
            let progress = state.current.uploadProgress
            if delta < 0 {
                state.results.totalBytesSent = 0
                progress.completedUnitCount = 0
            } else {
                state.results.totalBytesSent += UInt64(delta)
                progress.completedUnitCount = min(progress.totalUnitCount, Int64(clamping: state.results.totalBytesSent))
            }
            return (state.callbacks.delegate.value, state.callbacks.bytesSentBlock, state.queue, state.results.totalBytesSent)
        }
        guard delegate != nil || (block != nil && delta > 0) || membership.observer != nil else { return }
        let request = self.request
        deliver(internalOnly: delegate == nil && (block == nil || delta <= 0)) {
            delegate?.request(request, didSendBytes: delta)
            if delta > 0 { block?(UInt64(delta), total) }
            membership.observer?.request(request, id: membership.id, sent: sentSoFar, of: total)
        }
    }

    /// Records the outcome and reports finished or failed, then the completion (after a
    /// response written to a file is in place).
    private func finish(_ result: Result<FormDataResponse, FormDataError>, bodyFile: TemporaryFile?) {
        request.forgetSentBody(bodyFile)
        guard let receiving else { return report(result) }
        receiving.finish(result) { [self] outcome in report(outcome) }
    }

    private func report(_ result: Result<FormDataResponse, FormDataError>) {
        if case .success(let response) = result, let final = response.url { request.followRedirect(to: final) }
        let keepsBody = receiving?.keepsBody ?? true
        let (delegate, block, membership) = request.sending.withLock {
            state -> ((any FormDataRequestDelegate)?, (@Sendable () -> Void)?, QueueMembership) in
            let progress = state.current.uploadProgress
            switch result {
            case .success(let response):
                state.results.error = nil
                state.results.responseStatusCode = response.statusCode
                state.results.responseReasonPhrase = response.reasonPhrase
                state.results.responseHeaders = response.headers
                state.results.responseData = keepsBody ? response.body : nil
                state.results.responseURL = response.url
                state.results.authentication = response.authentication
                progress.completedUnitCount = progress.totalUnitCount
            case .failure(let error):
                state.results.error = error
            }
            state.current.inFlight = false
            if let driver = state.current.currentTask as? SendDriver {
                (state.results.uploadResumptionURL, state.results.uploadResumeCount) = driver.uploadResumption
            }
            state.current.currentTask = nil
            let block = if case .success = result { state.callbacks.completionBlock } else { state.callbacks.failedBlock }
            return (state.callbacks.delegate.value, block, state.queue)
        }
        let request = self.request
        let completion = self.completion
        let error: FormDataError? = if case .failure(let error) = result { error } else { nil }
        // The completion (what start() and startSynchronous() wait for) runs after the callbacks.
        deliver(internalOnly: delegate == nil && block == nil) {
            switch result {
            case .success: delegate?.requestFinished(request)
            case .failure: delegate?.requestFailed(request)
            }
            block?()
            membership.observer?.request(request, id: membership.id, endedWith: error)
            completion?(result)
        }
    }
}
