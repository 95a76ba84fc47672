import Foundation

/// One send of a ``FormDataRequest``: builds the body, starts it through the façade adapter
/// (`FacadeSend`), and turns its events into the request's state and its callbacks, in
/// ASIHTTPRequest's order for each moment: the delegate, the blocks, then the queue (and the
/// completion last).
final class SendContext: @unchecked Sendable {
    // `@unchecked`: the lets are set in init; the vars are written once, before the send starts.
    let request: FormDataRequest
    private let completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    /// The send: its events come to `handle(_:)`; the delegate and the blocks run in its
    /// callbacks — on the request's ``FormDataRequest/callbackQueue``, in a mailbox on the
    /// global queue without one, or on the thread of ``FormDataRequest/startSynchronous()``
    /// when it waits on the callback queue itself (`inbox`).
    private(set) var send: FacadeSend!
    /// The response file, when the body goes to ``FormDataRequest/downloadDestinationPath``.
    private var file: ResponseReceiving?
    /// Whether the finished response keeps its body (not when a data block or a file takes it).
    private var keepsBody = true
    /// The send's temporary body file, which the send removes: the request then forgets the
    /// built body it belonged to.
    private var bodyFile: TemporaryFile?
    /// The body's length (what ``FormDataRequest/uploadProgressBlock`` ends at); nil when a
    /// stream's length is not known (it then ends at what was sent).
    private var bodyLength: UInt64? = 0

    init(
        request: FormDataRequest, inbox: CallbackInbox? = nil,
        completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    ) {
        self.request = request
        self.completion = completion
        let callbacks = inbox.map(OrderedCallbacks.init(inbox:)) ?? OrderedCallbacks(queue: request.effectiveCallbackQueue)
        send = FacadeSend(transport: request.transport, callbacks: callbacks) { [self] event in handle(event) }
    }

    /// Builds the body, reports the start and starts the driver.
    func begin() {
        // Cancelled before the build: nothing is built.
        if send.isCancelledBeforeStart { return send.end(.cancelled) }
        let transportRequest: TransportRequest
        do {
            try request.buildPostBody()
            (transportRequest, bodyFile) = try request.makeTransportRequest()
        } catch {
            // buildPostBody throws FormDataError only; anything else is reported, not dropped.
            let failure = (error as? FormDataError).map(FormDataError.whileSending)
            return send.end(failure ?? .unableToCreateRequest(underlying: UnderlyingError(error)))
        }
        let length = transportRequest.body.knownLength
        bodyLength = length
        let (callbacks, settings, membership) = request.sending.withLock { state in
            state.current.uploadProgress.completedUnitCount = 0
            // Never 0: an empty body counts as one unit, completed when the request finishes. An
            // unknown length counts as all the units there are until the request finishes.
            state.current.uploadProgress.totalUnitCount = length.map { max(1, Int64(clamping: $0)) } ?? .max
            return (state.callbacks, state.settings, state.membership)
        }
        do throws(FormDataError) {
            file = try ResponseReceiving(callbacks: callbacks, settings: settings)
        } catch {
            return send.end(.whileSending(error), bodyFile: bodyFile)
        }
        keepsBody = file == nil && callbacks.dataReceivedBlock == nil
        let delegate = callbacks.delegate.value
        let started = callbacks.startedBlock
        // The upload size after the start; a queue sized the batch already (its requests do not
        // report it, as in ASI).
        let sizeBlock = membership.queue == nil && length != nil ? callbacks.uploadSizeIncrementedBlock : nil
        deliver(callsUser: delegate != nil || started != nil || sizeBlock != nil, membership) { [request] in
            delegate?.requestStarted(request)
            started?()
            membership.queue?.requestStarted(request, id: membership.id)
            sizeBlock?(Int64(clamping: length ?? 0))
        }
        var options = FacadeSend.Options()
        options.retriesOnTimeout = settings.numberOfTimesToRetryOnTimeout
        options.retryPolicy = settings.retryPolicy
        options.streamsResponseBody =
            file != nil || membership.queue != nil || callbacks.dataReceivedBlock != nil || callbacks.bytesReceivedBlock != nil
        options.keepsResponseBody = keepsBody
        options.responseDemand = file?.demand
        file?.cancelSend = { [weak send] in send?.cancel() }
        send.start(transportRequest, bodyFile: bodyFile, options: options)
    }

    /// Runs `work` where the callbacks go, after what was delivered before — unless it has
    /// nobody to tell: `callsUser` (the delegate or a block) nor a queue. Work that only tells
    /// the queue may run in place (`OrderedCallbacks/deliver(internalOnly:_:)`).
    private func deliver(callsUser: Bool, _ membership: QueueMembership, _ work: @escaping @Sendable () -> Void) {
        guard callsUser || membership.queue != nil else { return }
        send.deliver(internalOnly: !callsUser, work)
    }

    /// One event of the send (in order, one at a time).
    private func handle(_ event: FacadeSend.Event) {
        switch event {
        case .uploadProgress(let progress):
            reportProgress(progress)
        case .retrying(let count):
            request.sending.withLock { $0.results.retryCount = count }
        case .responseHead(let head):
            reportResponseHead(head)
        case .responseBody(let chunk, let received, let expected):
            file?.received(chunk)
            let (dataBlock, bytesBlock, membership) = request.sending.withLock {
                ($0.callbacks.dataReceivedBlock, $0.callbacks.bytesReceivedBlock, $0.membership)
            }
            deliver(callsUser: dataBlock != nil || bytesBlock != nil, membership) { [request] in
                dataBlock?(chunk)
                bytesBlock?(UInt64(chunk.count), expected ?? 0)
                membership.queue?.request(request, id: membership.id, received: received)
            }
        case .finished(let result):
            request.forgetSentBody(bodyFile)
            // After a response written to a file is in place (or removed).
            guard let file else { return report(result) }
            file.finish(result) { [self] outcome in report(outcome) }
        }
    }

    /// Body bytes went out, or a timed-out attempt's bytes are taken back (a negative delta:
    /// ASIHTTPRequest reported that to the delegate only).
    private func reportProgress(_ progress: FacadeSend.UploadProgress) {
        let (delta, sent, total) = (progress.delta, progress.sent, progress.total)
        let (delegate, block, progressBlock, membership) = request.sending.withLock { state in
            let object = state.current.uploadProgress
            state.results.totalBytesSent = sent
            object.completedUnitCount = min(object.totalUnitCount, Int64(clamping: sent))
            let block = delta > 0 ? state.callbacks.bytesSentBlock : nil
            return (state.callbacks.delegate.value, block, state.callbacks.uploadProgressBlock, state.membership)
        }
        deliver(callsUser: delegate != nil || block != nil || progressBlock != nil, membership) { [request] in
            delegate?.request(request, didSendBytes: delta)
            block?(UInt64(clamping: delta), total)
            progressBlock?(sent, total)
            membership.queue?.request(request, id: membership.id, sent: sent, of: total)
        }
    }

    /// The response head: the download size (when known and not in a queue, which counts it
    /// itself), the delegate, ``FormDataRequest/headersReceivedBlock``, then the queue.
    private func reportResponseHead(_ head: TransportResponseHead) {
        let (callbacks, membership) = request.sending.withLock { state in
            state.results.responseStatusCode = head.statusCode
            state.results.responseReasonPhrase = head.reasonPhrase
            state.results.responseHeaders = head.headers
            return (state.callbacks, state.membership)
        }
        file?.responseHead()
        let delegate = callbacks.delegate.value
        let headersBlock = callbacks.headersReceivedBlock
        let (headers, length) = (head.headers, head.contentLength)
        let sizeBlock = membership.queue == nil && length != nil ? callbacks.downloadSizeIncrementedBlock : nil
        deliver(callsUser: delegate != nil || headersBlock != nil || sizeBlock != nil, membership) { [request] in
            sizeBlock?(Int64(clamping: length ?? 0))
            delegate?.request(request, didReceiveResponseHeaders: headers)
            headersBlock?(headers)
            membership.queue?.request(request, id: membership.id, didReceiveResponseHeaders: headers, expectedLength: length)
        }
    }

    /// Records the outcome and reports finished or failed, then the completion (what start()
    /// and startSynchronous() wait for) after the callbacks.
    private func report(_ result: Result<FormDataResponse, FormDataError>) {
        if case .success(let response) = result, let final = response.url { request.followRedirect(to: final) }
        let keepsBody = self.keepsBody
        var length = bodyLength ?? 0
        var progressBlock: (@Sendable (UInt64, UInt64) -> Void)?
        let (delegate, block, membership) = request.sending.withLock {
            state -> ((any FormDataRequestDelegate)?, (@Sendable () -> Void)?, QueueMembership) in
            switch result {
            case .success(let response):
                state.results.responseStatusCode = response.statusCode
                state.results.responseReasonPhrase = response.reasonPhrase
                state.results.responseHeaders = response.headers
                state.results.responseData = keepsBody ? response.body : nil
                state.results.responseURL = response.url
                state.results.responseHTTPVersion = response.httpVersion
                state.results.authentication = response.authentication
                let progress = state.current.uploadProgress
                if bodyLength == nil {
                    // The length is known now: what was sent.
                    length = state.results.totalBytesSent
                    progress.completedUnitCount = min(progress.completedUnitCount, max(1, Int64(clamping: length)))
                    progress.totalUnitCount = max(1, Int64(clamping: length))
                }
                progress.completedUnitCount = progress.totalUnitCount
                if state.results.totalBytesSent != length || length == 0 || bodyLength == nil {
                    progressBlock = state.callbacks.uploadProgressBlock
                }
            case .failure(let error):
                state.results.error = error
            }
            state.current.inFlight = false
            let block = if case .success = result { state.callbacks.completionBlock } else { state.callbacks.failedBlock }
            return (state.callbacks.delegate.value, block, state.membership)
        }
        let error: FormDataError? = if case .failure(let error) = result { error } else { nil }
        send.deliver(internalOnly: delegate == nil && block == nil && progressBlock == nil) {
            [request, completion, progressBlock, length] in
            progressBlock?(length, length)
            switch result {
            case .success: delegate?.requestFinished(request)
            case .failure: delegate?.requestFailed(request)
            }
            block?()
            membership.queue?.request(request, id: membership.id, endedWith: error)
            completion?(result)
        }
    }
}
