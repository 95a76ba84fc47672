import FormDataKitBody
import FormDataKitEngine
import FormDataKitWire
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
        if let queue = effectiveCallbackQueue, CallbackInbox.isCurrent(queue) {
            // Called on the callback queue itself (the main queue, say): blocking here would keep
            // the callbacks from ever running, so they are run here, in order, as they come.
            let inbox = CallbackInbox()
            send(inbox: inbox, buildingHere: true) { result in
                if case .failure(let error) = result { outcome.withLock { $0 = error } }
                inbox.close()
            }
            inbox.runUntilClosed()
            return outcome.current
        }
        let done = SynchronousWait()
        let start = {
            self.send(buildingHere: true) { result in
                if case .failure(let error) = result { outcome.withLock { $0 = error } }
                done.finish()
            }
        }
        if let transport = transport as? any CallerDrivenTransport {
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
        _ = cancelWhileQueued()
        sending.withLock { $0.current.inFlight ? $0.current.send : nil }?.cancel()
    }

    /// Starts one send; `completion` runs after the last callback. `buildingHere`: the caller
    /// waits for the send anyway (``startSynchronous()``), so the body is built on its thread.
    func send(
        inbox: CallbackInbox? = nil, buildingHere: Bool = false,
        _ completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)?
    ) {
        let context = SendContext(request: self, inbox: inbox, completion: completion)
        guard claim(context) else {
            context.send.abandon()
            completion?(.failure(.requestInProgress))
            return
        }
        if buildingHere {
            context.begin()
        } else {
            // The build reads files (and may compress): on the shared global queue, never the
            // caller's (an actor's, or the concurrency pool's).
            DispatchQueue.sharedGlobal.async { context.begin() }
        }
    }

    /// Makes `context`'s send the request's send in flight; false when one is already (a
    /// request is sent once at a time: the caller then abandons `context`'s send).
    func claim(_ context: SendContext) -> Bool {
        sending.withLock { state -> Bool in
            guard !state.current.inFlight else { return false }
            state.current.inFlight = true
            state.resetResults()
            state.current.send = context.send
            // Completed first: corelibs' Progress traps on some total/completed transitions.
            state.current.uploadProgress.completedUnitCount = 0
            return true
        }
    }

    /// Builds what the transport sends from the current state (after a successful build), and
    /// the temporary body file the send owns (nil when none).
    func makeTransportRequest() -> Result<(TransportRequest, TemporaryFile?), FormDataError> {
        let settings = sending.withLock {
            (
                $0.settings.timeOutSeconds, $0.settings.allowCompressedResponse, $0.settings.userAgentString, $0.settings.username,
                $0.settings.password,
                $0.settings.maximumDecompressedResponseSize, $0.settings.maximumResponseSize
            )
        }
        let (timeout, allowCompressed, userAgent, username, password, responseLimit, rawResponseLimit) = settings
        let totalTimeout = sending.withLock { $0.settings.totalTimeOutSeconds }
        let idempotency: String?
        switch idempotencyHeaderValue() {
        case .failure(let error): return .failure(error)
        case .success(let value): idempotency = value
        }
        let network = networkOptions()
        let chosenTransport = transport
        // The body in the form the transport takes (read or spooled outside the lock).
        let (built, generation) = state.withLock { ($0.built, $0.generation) }
        var delivered = BodyDelivery.Delivered(body: .none, temporaryFile: nil)
        if let built {
            do throws(FormDataError) {
                delivered = try built.delivered(to: chosenTransport.acceptedBodyForms, inMemoryLimit: chosenTransport.inMemoryBodyLimit)
            } catch {
                return .failure(.whileSending(error))
            }
        }
        // A spool made for this send shows as the body's while it runs (postBodyFilePath), as in ASI.
        if let file = delivered.temporaryFile, built?.compressed == nil, built?.spooledFile !== file {
            _ = keepSpool(file, generation: generation)
        }
        let transportAnswersChallenges = chosenTransport.answersAuthenticationChallenges
        let transportKeepsCookies = chosenTransport.capabilities.contains(.cookies)
        return state.withLock { state in
            guard let scheme = state.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                state.url.host != nil
            else {
                return .failure(
                    .unableToCreateRequest(
                        underlying: UnderlyingError(
                            domain: "FormDataKit", code: 0, message: "Not an http or https URL: \(state.url.absoluteString)")))
            }
            // The caller's headers with the build's over them (``RequestState/effectiveHeaders``),
            // Content-Length left to the transport, by name: put together in one array.
            let built = state.built?.headers ?? []
            var headers: [(name: String, value: String)] = []
            headers.reserveCapacity(state.requestHeaders.count + built.count + 4)
            for (name, value) in state.requestHeaders where !built.contains(where: { $0.name == name }) {
                headers.append((name: name, value: value))
            }
            headers += built
            headers.removeAll { $0.name.equalsIgnoringASCIICase("Content-Length") }
            headers.sort { $0.name < $1.name }
            func has(_ name: String) -> Bool {
                headers.contains { $0.name.equalsIgnoringASCIICase(name) }
            }
            if !has("Accept-Encoding") {
                headers.append((name: "Accept-Encoding", value: allowCompressed ? "gzip" : "identity"))
            }
            if let idempotency, !has(IdempotencyKey.headerName) { headers.append((name: IdempotencyKey.headerName, value: idempotency)) }
            if !has("User-Agent") {
                headers.append((name: "User-Agent", value: userAgent ?? Self.defaultUserAgentString))
            }
            // The transport sends what it is given: Basic credentials and cookies as headers
            // when it does not apply them itself.
            if !transportAnswersChallenges, !has("Authorization"), let username, network.presentsCredentialsBeforeChallenge {
                headers.append((name: "Authorization", value: Self.basicAuthorization(username: username, password: password ?? "")))
            }
            if !transportKeepsCookies, !has("Cookie"), !network.requestCookies.isEmpty {
                headers.append((name: "Cookie", value: network.requestCookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")))
            }
            var request = TransportRequest(
                url: state.url, method: state.effectiveMethod, headers: headers, body: delivered.body,
                timeoutInterval: timeout)
            request.totalTimeoutInterval = totalTimeout
            request.maximumDecompressedResponseSize = responseLimit
            request.maximumResponseSize = rawResponseLimit
            request.network = network
            state.lastSentPostLength = state.built?.postLength ?? 0
            return .success((request, delivered.temporaryFile))
        }
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
