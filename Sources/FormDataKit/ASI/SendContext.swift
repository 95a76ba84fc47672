import FormDataKitBody
import FormDataKitEngine
import FormDataKitWire
import Foundation

/// One send of a ``FormDataRequest``: builds the body, starts it through the façade adapter
/// (`FacadeSend`), and turns its events into the request's state and its ordered callbacks
/// (delegate, blocks, the queue, then the completion).
final class SendContext: @unchecked Sendable {
    // `@unchecked`: the lets are set in init; `receiving` is written once, before the send starts.
    let request: FormDataRequest
    private let completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    /// The send: its events come to `handle(_:)`; the delegate and the blocks run in its
    /// callbacks — on the request's ``FormDataRequest/callbackQueue``, in a mailbox on the
    /// global queue without one, or on the thread of ``FormDataRequest/startSynchronous()``
    /// when it waits on the callback queue itself (`inbox`).
    private(set) var send: FacadeSend!
    /// The response body as it arrives, when something takes it (set before the send starts).
    var receiving: ResponseReceiving?
    /// The send's temporary body file (set before the send starts), which the send removes:
    /// the request then forgets the built body it belonged to.
    private var bodyFile: TemporaryFile?

    init(
        request: FormDataRequest, inbox: CallbackInbox? = nil,
        completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    ) {
        self.request = request
        self.completion = completion
        let callbacks = inbox.map(OrderedCallbacks.init(inbox:)) ?? OrderedCallbacks(queue: request.effectiveCallbackQueue)
        send = FacadeSend(transport: request.transport, callbacks: callbacks) { [self] event in handle(event) }
    }

    /// Runs `work` where the delegate and blocks go, after what was delivered before
    /// (`OrderedCallbacks/deliver(internalOnly:_:)`).
    func deliver(internalOnly: Bool = false, _ work: @escaping @Sendable () -> Void) {
        send.deliver(internalOnly: internalOnly, work)
    }

    /// Builds the body, reports the start and starts the driver.
    func begin() {
        // Cancelled before the build: nothing is built.
        if send.isCancelledBeforeStart { return send.end(.cancelled) }
        do {
            try request.buildPostBody()
        } catch let error as FormDataError {
            return send.end(.whileSending(error))
        } catch {
            // buildPostBody only throws FormDataError; anything else is reported as a connection-
            // independent creation failure rather than dropped.
            return send.end(.unableToCreateRequest(underlying: UnderlyingError(error)))
        }
        let (transportRequest, bodyFile): (TransportRequest, TemporaryFile?)
        switch request.makeTransportRequest() {
        case .failure(let error):
            return send.end(error)
        case .success(let value):
            (transportRequest, bodyFile) = value
        }
        self.bodyFile = bodyFile
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
                return send.end(.whileSending(error), bodyFile: bodyFile)
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
        var options = FacadeSend.Options()
        options.retriesOnTimeout = settings.numberOfTimesToRetryOnTimeout
        options.retryPolicy = settings.retryPolicy
        options.streamsResponseBody = receiving != nil
        options.keepsResponseBody = receiving?.keepsBody ?? true
        options.responseDemand = receiving?.demand
        receiving?.cancelSend = { [weak send] in send?.cancel() }
        let send = self.send!
        send.start(transportRequest, bodyFile: bodyFile, options: options)
    }

    /// One event of the send (in order, one at a time).
    private func handle(_ event: FacadeSend.Event) {
        switch event {
        case .uploadProgress(let progress):
            reportProgress(progress)
        case .retrying(let count):
            request.sending.withLock { $0.results.retryCount = count }
        case .responseHead(let head):
            let (callbacks, membership) = request.sending.withLock { state in
                state.results.responseStatusCode = head.statusCode
                state.results.responseReasonPhrase = head.reasonPhrase
                state.results.responseHeaders = head.headers
                return (state.callbacks, state.queue)
            }
            receiving?.responseHead(head)
            reportResponseHead(head, callbacks: callbacks, membership: membership)
        case .responseBody(let chunk, let received, let expected):
            self.received(chunk, received: received, expected: expected)
        case .finished(let result):
            finish(result)
        }
    }

    /// Body bytes went out, or a timed-out attempt's bytes are taken back (a negative delta:
    /// ASIHTTPRequest reported that to the delegate only).
    private func reportProgress(_ progress: FacadeSend.UploadProgress) {
        let (delta, sent, total) = (progress.delta, progress.sent, progress.total)
        let (delegate, block, membership) = request.sending.withLock { state in
            let object = state.current.uploadProgress
            state.results.totalBytesSent = sent
            object.completedUnitCount = min(object.totalUnitCount, Int64(clamping: sent))
            return (state.callbacks.delegate.value, state.callbacks.bytesSentBlock, state.queue)
        }
        guard delegate != nil || (block != nil && delta > 0) || membership.observer != nil else { return }
        let request = self.request
        deliver(internalOnly: delegate == nil && (block == nil || delta <= 0)) {
            delegate?.request(request, didSendBytes: delta)
            if delta > 0 { block?(UInt64(delta), total) }
            membership.observer?.request(request, id: membership.id, sent: sent, of: total)
        }
    }

    /// Records the outcome and reports finished or failed, then the completion (after a
    /// response written to a file is in place).
    private func finish(_ result: Result<FormDataResponse, FormDataError>) {
        request.forgetSentBody(bodyFile)
        guard let receiving else { return report(result) }
        receiving.finish(result) { [self] outcome in report(outcome) }
    }

    private func report(_ result: Result<FormDataResponse, FormDataError>) {
        if case .success(let response) = result, let final = response.url { request.followRedirect(to: final) }
        let keepsBody = receiving?.keepsBody ?? true
        let resumption = send.uploadResumption
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
            (state.results.uploadResumptionURL, state.results.uploadResumeCount) = resumption
            state.current.send = nil
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
