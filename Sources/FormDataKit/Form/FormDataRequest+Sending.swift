import Foundation

extension FormDataRequest {
    // MARK: - Sending

    /// Sends the request and blocks the calling thread until it has finished or failed and every
    /// delegate method and block has been called (ASIHTTPRequest's `-startSynchronous`). Then
    /// read ``error``, ``responseStatusCode``, ``responseData``, ``responseString``,
    /// ``responseHeaders`` and ``responseStatusMessage``.
    ///
    /// Safe from any thread, the main thread in top-level code included: the work happens on the
    /// transport's and the request's own queues, never on the caller's actor.
    public func startSynchronous() {
        let done = DispatchSemaphore(value: 0)
        send { _ in done.signal() }
        done.wait()
    }

    /// Starts sending and returns at once (ASIHTTPRequest's `-startAsynchronous`); the delegate
    /// and the blocks report what happens. The request keeps itself alive until it completes.
    public func startAsynchronous() {
        send(nil)
    }

    /// Sends the request and returns the response. A 404 or 500 is a response, not an error.
    /// Cancelling the calling task cancels the request.
    /// - Throws: ``FormDataError`` in the sending categories (``FormDataError/timedOut(underlying:)``,
    ///   ``FormDataError/cancelled``, ``FormDataError/internalErrorWhileBuilding(underlying:)``…).
    public func start() async throws(FormDataError) -> FormDataResponse {
        let result: Result<FormDataResponse, FormDataError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                send { continuation.resume(returning: $0) }
                if Task.isCancelled { cancel() }
            }
        } onCancel: {
            cancel()
        }
        return try result.get()
    }

    /// Cancels the send in progress; it fails with ``FormDataError/cancelled`` (delegate
    /// `requestFailed`, ``failedBlock``) and its temporary files are removed. No effect when idle.
    public func cancel() {
        let task: (any TransportTask)? = sending.withLock { state in
            guard state.inFlight else { return nil }
            state.cancelRequested = true
            return state.currentTask
        }
        task?.cancel()
    }

    /// Starts one send; `completion` runs after the last callback.
    func send(_ completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?) {
        let claimed = sending.withLock { state -> Bool in
            guard !state.inFlight else { return false }
            state.inFlight = true
            state.resetResults()
            // Completed first: corelibs' Progress traps on some total/completed transitions.
            state.uploadProgress.completedUnitCount = 0
            return true
        }
        guard claimed else {
            completion?(.failure(.requestInProgress))
            return
        }
        let context = SendContext(request: self, completion: completion)
        context.queue.async { context.begin() }
    }

    /// Builds what the transport sends from the current state (after a successful build).
    func makeTransportRequest() -> Result<(TransportRequest, TemporaryFile?), FormDataError> {
        let settings = sending.withLock { ($0.timeOutSeconds, $0.allowCompressedResponse, $0.userAgentString, $0.username, $0.password) }
        let (timeout, allowCompressed, userAgent, username, password) = settings
        return state.withLock { state in
            guard let scheme = state.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                state.url.host != nil
            else {
                return .failure(.unableToCreateRequest(underlying: UnderlyingError(
                    domain: "FormDataKit", code: 0, message: "Not an http or https URL: \(state.url.absoluteString)")))
            }
            var headers: [(name: String, value: String)] = state.requestHeaders
                .filter { $0.key.caseInsensitiveCompare("Content-Length") != .orderedSame }
                .sorted { $0.key < $1.key }
                .map { (name: $0.key, value: $0.value) }
            func has(_ name: String) -> Bool {
                headers.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            }
            if !has("Accept-Encoding") {
                headers.append((name: "Accept-Encoding", value: allowCompressed ? "gzip" : "identity"))
            }
            if !has("User-Agent") {
                headers.append((name: "User-Agent", value: userAgent ?? Self.defaultUserAgentString))
            }
            if !has("Authorization"), let username {
                headers.append((name: "Authorization", value: Self.basicAuthorization(username: username, password: password ?? "")))
            }
            let body: TransportRequest.Body
            var file: TemporaryFile?
            switch state.built?.payload ?? .none {
            case .none:
                body = .none
            case .memory(let data):
                body = .data(data)
            case .file(let payloadFile):
                body = .file(path: payloadFile.path, length: state.built?.postLength ?? 0)
                file = payloadFile
            }
            let request = TransportRequest(
                url: state.url, method: state.requestMethod, headers: headers, body: body,
                timeoutInterval: timeout)
            return .success((request, file))
        }
    }

    /// Removes the temporary body file of the last send and forgets the built body it belonged
    /// to (ASIHTTPRequest's `removeTemporaryUploadFile`); the next send builds it again.
    func releaseSentBody(_ file: TemporaryFile?) {
        guard let file else { return }
        file.remove()
        state.withLock { state in
            if case .file(let current)? = state.built?.payload, current === file { state.built = nil }
        }
    }
}

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

    init(request: FormDataRequest, completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?) {
        self.request = request
        self.completion = completion
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Builds the body, reports the start and sends the first attempt. Runs on ``queue``.
    func begin() {
        if request.sending.withLock({ $0.cancelRequested }) {
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
            state.uploadProgress.completedUnitCount = 0
            state.uploadProgress.totalUnitCount = total
            return (state.delegate.value, state.startedBlock)
        }
        delegate?.requestStarted(request)
        started?()
        attempt()
    }

    /// Hands the request to the transport (again, after a timeout).
    private func attempt() {
        guard let transportRequest = locked({ transportRequest }) else { return }
        let transport = request.transport
        let task = transport.start(transportRequest, observer: self)
        let cancelNow = request.sending.withLock { state -> Bool in
            state.currentTask = task
            return state.cancelRequested
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
            state.responseStatusCode = head.statusCode
            state.responseHeaders = head.headers
            return state.delegate.value
        }
        let request = self.request
        queue.async { delegate?.request(request, didReceiveResponseHeaders: head.headers) }
    }

    func transportDidComplete(_ result: Result<FormDataResponse, FormDataError>) {
        if case .failure(.timedOut) = result {
            let retry = request.sending.withLock { state -> Bool in
                guard !state.cancelRequested, state.retryCount < state.numberOfTimesToRetryOnTimeout else { return false }
                state.retryCount += 1
                state.currentTask = nil
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
        if case .failure = result, request.sending.withLock({ $0.cancelRequested }) {
            result = .failure(.cancelled)
        }
        finish(result)
    }

    // MARK: - Progress

    private func reportProgress(_ increment: Int64) {
        let (delegate, block, total) = request.sending.withLock { state in
            state.totalBytesSent += UInt64(increment)
            let progress = state.uploadProgress
            progress.completedUnitCount = min(progress.totalUnitCount, Int64(clamping: state.totalBytesSent))
            return (state.delegate.value, state.bytesSentBlock, self.bodyLength)
        }
        let request = self.request
        queue.async {
            delegate?.request(request, didSendBytes: increment)
            block?(UInt64(increment), total)
        }
    }

    private func resetProgress(removing sentSoFar: Int64) {
        let delegate = request.sending.withLock { state in
            state.totalBytesSent = 0
            state.uploadProgress.completedUnitCount = 0
            return state.delegate.value
        }
        guard sentSoFar > 0 else { return }
        let request = self.request
        queue.async { delegate?.request(request, didSendBytes: -sentSoFar) }
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
        let (delegate, block) = request.sending.withLock { state -> ((any FormDataRequestDelegate)?, (@Sendable () -> Void)?) in
            let progress = state.uploadProgress
            switch result {
            case .success(let response):
                state.error = nil
                state.responseStatusCode = response.statusCode
                state.responseHeaders = response.headers
                state.responseData = response.body
                progress.completedUnitCount = progress.totalUnitCount
            case .failure(let error):
                state.error = error
            }
            state.inFlight = false
            state.currentTask = nil
            if case .success = result { return (state.delegate.value, state.completionBlock) }
            return (state.delegate.value, state.failedBlock)
        }
        let request = self.request
        let completion = self.completion
        queue.async {
            switch result {
            case .success: delegate?.requestFinished(request)
            case .failure: delegate?.requestFailed(request)
            }
            block?()
            completion?(result)
        }
    }
}
