import Foundation

extension FormDataRequest {
    // MARK: - Sending

    /// Sends the request and blocks the calling thread until it has finished or failed and every
    /// delegate method and block has been called (ASIHTTPRequest's `-startSynchronous`). Then
    /// read ``error``, ``responseStatusCode``, ``responseData``, ``responseString``,
    /// ``responseHeaders`` and ``responseStatusMessage``.
    ///
    /// Safe from any thread, the main thread in top-level code included: the body is built on the
    /// calling thread (which waits anyway), the exchange runs on the transport's threads — over
    /// `CurlTransport` on this thread itself, which drives the transport's libcurl loop while it
    /// waits unless another thread already does — and the callbacks where ``callbackQueue`` says
    /// (or run here, when called on that queue itself).
    ///
    /// - Returns: what failed this call, or nil when its send succeeded (a 404 is a success). A
    ///   call made while the request is already being sent (from another thread) returns
    ///   `FormDataError.requestInProgress` at once and leaves ``error`` and the other send alone.
    @discardableResult
    public func startSynchronous() -> FormDataError? {
        let outcome = Locked<FormDataError?>(nil)
        // Called on the callback queue itself (the main queue, say), blocking would keep the
        // callbacks from ever running: they are run here instead, in order, as they come.
        let inbox = effectiveCallbackQueue.flatMap { CallbackInbox.isCurrent($0) ? CallbackInbox() : nil }
        let done = SynchronousWait()
        let start = {
            self.send(inbox: inbox, buildingHere: true) { result in
                if case .failure(let error) = result { outcome.withLock { $0 = error } }
                inbox?.close()
                done.finish()
            }
        }
        if let inbox {
            start()
            inbox.runUntilClosed()
        } else if let transport = transport as? any CallerDrivenTransport {
            // The transport's work runs on this thread while it waits (curl: no hand-off to
            // its thread and back).
            transport.drive(until: done, after: start)
        } else {
            start()
            done.wait()
        }
        return outcome.current
    }

    /// Starts sending and returns at once (ASIHTTPRequest's `-startAsynchronous`); the delegate
    /// and the blocks report what happens. The request keeps itself alive until it completes.
    public func startAsynchronous() {
        send(nil)
    }

    /// Sends the request and returns the response. A 404 or 500 is a response, not an error.
    /// Cancelling the calling task cancels the request.
    /// - Throws: `FormDataError` in the sending categories (`FormDataError.timedOut(underlying:)`,
    ///   `FormDataError.cancelled`, `FormDataError.internalErrorWhileBuilding(underlying:)`…).
    /// - Returns: the complete response (status, headers, body inflated when it came compressed).
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

    /// Cancels the send in progress; it fails with `FormDataError.cancelled` (delegate
    /// `requestFailed`, ``failedBlock``) and its temporary files are removed. A request waiting
    /// unstarted in a ``NetworkQueue`` fails the same way without being sent (as ASI's did).
    /// No effect when idle.
    public func cancel() {
        cancelWhileQueued()
        sending.withLock { $0.current.inFlight ? $0.current.send : nil }?.cancel()
    }

    /// Starts one send, unless one is in flight (a request is sent once at a time: this one then
    /// fails with ``FormDataError/requestInProgress`` at once, reporting nothing else).
    /// - Parameters:
    ///   - inbox: where the callbacks run when ``startSynchronous()`` runs them itself.
    ///   - buildingHere: the caller waits for the send anyway (``startSynchronous()``), so the
    ///     body is built on its thread.
    ///   - cancelledFirst: the send fails unsent with ``FormDataError/cancelled``, reporting as a
    ///     cancelled send does (the delegate's `requestFailed`, ``failedBlock``, then the queue):
    ///     a queued request or an operation cancelled before it started.
    ///   - completion: runs after the last callback.
    func send(
        inbox: CallbackInbox? = nil, buildingHere: Bool = false, cancelledFirst: Bool = false,
        _ completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    ) {
        let context = SendContext(request: self, inbox: inbox, completion: completion)
        if cancelledFirst { context.send.cancel() }
        let claimed = sending.withLock { state -> Bool in
            guard !state.current.inFlight else { return false }
            state.current.inFlight = true
            state.results = SendResults()
            state.current.send = context.send
            // Completed first: corelibs' Progress traps on some total/completed transitions.
            state.current.uploadProgress.completedUnitCount = 0
            return true
        }
        guard claimed else {
            context.send.abandon()
            completion?(.failure(.requestInProgress))
            return
        }
        if buildingHere || cancelledFirst {
            context.begin()
        } else {
            // The build reads files (and may compress): on the shared global queue, never the
            // caller's (an actor's, or the concurrency pool's).
            DispatchQueue.sharedGlobal.async { context.begin() }
        }
    }

    /// What the transport sends, from the current state (after a successful build), and the
    /// temporary body file the send owns (nil when none).
    func makeTransportRequest() throws(FormDataError) -> (TransportRequest, TemporaryFile?) {
        let settings = sending.withLock { $0.settings }
        let idempotency = try idempotencyHeaderValue()
        let network = settings.networkOptions
        let transport = self.transport
        // The body in the form the transport takes (read or spooled outside the lock).
        let (built, generation) = state.withLock { ($0.built, $0.generation) }
        let delivered =
            try built?.delivered(to: transport.acceptedBodyForms, inMemoryLimit: transport.inMemoryBodyLimit)
            ?? BodyDelivery.Delivered(body: .none, temporaryFile: nil)
        // A spool made for this send shows as the body's while it runs (postBodyFilePath), as in ASI.
        if let file = delivered.temporaryFile, built?.compressed == nil, built?.spooledFile !== file {
            _ = keepSpool(file, generation: generation)
        }
        let made = state.withLock { state -> TransportRequest? in
            guard let scheme = state.url.scheme?.lowercased(), scheme == "http" || scheme == "https", state.url.host != nil else {
                return nil
            }
            // The caller's headers with the build's over them (``RequestState/effectiveHeaders``),
            // Content-Length left to the transport, sorted by name.
            var headers = state.effectiveHeaders.filter { !$0.key.equalsIgnoringASCIICase("Content-Length") }
                .map { (name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
            func add(_ name: String, _ value: @autoclosure () -> String?) {
                guard !headers.contains(where: { $0.name.equalsIgnoringASCIICase(name) }), let value = value() else { return }
                headers.append((name: name, value: value))
            }
            add("Accept-Encoding", settings.allowCompressedResponse ? "gzip" : "identity")
            add(IdempotencyKey.headerName, idempotency)
            add("User-Agent", settings.userAgentString ?? Self.defaultUserAgentString)
            // The transport sends what it is given: Basic credentials and cookies as headers
            // when it does not apply them itself.
            if !transport.answersAuthenticationChallenges, let username = settings.username, network.presentsCredentialsBeforeChallenge {
                add("Authorization", Self.basicAuthorization(username: username, password: settings.password ?? ""))
            }
            if !transport.capabilities.contains(.cookies), !network.requestCookies.isEmpty {
                add("Cookie", network.requestCookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; "))
            }
            var request = TransportRequest(
                url: state.url, method: state.effectiveMethod, headers: headers, body: delivered.body,
                timeoutInterval: settings.timeOutSeconds)
            request.totalTimeoutInterval = settings.totalTimeOutSeconds
            request.maximumDecompressedResponseSize = settings.maximumDecompressedResponseSize
            request.maximumResponseSize = settings.maximumResponseSize
            request.network = network
            state.lastSentPostLength = state.built?.postLength ?? 0
            return request
        }
        guard let made else {
            throw .unableToCreateRequest(
                underlying: UnderlyingError(domain: "FormDataKit", code: 0, message: "Not an http or https URL: \(url.absoluteString)"))
        }
        return (made, delivered.temporaryFile)
    }

    /// Forgets the built body whose temporary file `file` the send that ended removed (ASIHTTPRequest's
    /// `removeTemporaryUploadFile`): the next send builds it again.
    func forgetSentBody(_ file: TemporaryFile?) {
        guard let file else { return }
        state.withLock { state in
            if let built = state.built, built.owns(file) { state.built = nil }
        }
    }
}
