import FormDataKitBody
import FormDataKitWire
import Foundation

/// Carries out one send: feeds a ``SendStateMachine`` the transport's reports, the caller's
/// cancel and the clock, and does what it says — starts and stops exchanges, arms the idle
/// timer, keeps the response body, reports to the façade, removes the body's temporary file
/// at the end. ``FormDataRequest`` and FormDataKitAF's managers send through it.
///
/// Threads: the machine is touched only under one lock; transports are started and cancelled
/// outside it. The façade's events run in order, one at a time, through its ``SendDriverOutbox``,
/// drained by the thread that produced them (a transport's, the timer's) once the lock is
/// released: a façade only records them and hands user code to a queue of its own. No queue or
/// thread is made per send.
final class SendDriver: TransportTask, @unchecked Sendable {
    // `@unchecked`: every mutable field is touched only under `lock`.

    /// What the façade hears, in order, one at a time, possibly on a transport's thread (return
    /// quickly; run user code elsewhere); ``finished(_:retryCount:)`` exactly once, last.
    enum Event: Sendable {
        /// Body bytes went out: `sent` bytes of this attempt in all (monotonic within an attempt,
        /// exactly the body's length when the send succeeds), `delta` more than the last report
        /// (negative, and `sent` 0, when a timed-out attempt is taken back).
        case progress(sent: Int64, delta: Int64)
        /// The send starts again after a timeout (`retryCount` so far).
        case retrying(retryCount: Int)
        /// The head of the response that answers the send, and the URL of the request it answers.
        case responseHead(TransportResponseHead, url: URL)
        /// The send ended, with the whole response (its body decoded) or the error.
        case finished(Result<FormDataResponse, FormDataError>, retryCount: Int)
    }

    private let transport: any FormDataTransport
    private let onEvent: @Sendable (Event) -> Void
    private let onResponseBody: (@Sendable (Data) -> Void)?
    private let keepsResponseBody: Bool
    /// The back-pressure of the consumer of `onResponseBody`, handed to every exchange.
    private let responseDemand: ResponseDemand?
    /// The façade's events waiting to run (under `lock`).
    private var outbox = SendDriverOutbox()
    private let lock = Locked()
    private var machine: SendStateMachine
    /// Resumes interrupted uploads when the request asks for it (``NetworkOptions/resumesInterruptedUploads``).
    private var resumption: ResumableUploadStateMachine?
    private var tasks: [Int: any TransportTask] = [:]
    private var cancelledExchanges: Set<Int> = []
    private var collector: ResponseBodyCollector?
    private var bodyFile: TemporaryFile?
    /// The idle clock's pending deadline (cancelled when the send ends).
    private var timer: SendTimer.Token?
    /// Whether this event's handler claimed the outbox's drain (under `lock`).
    private var claimedDrain = false

    /// A driver that sends `request` through `transport`.
    /// - Parameters:
    ///   - request: the request, its body in a form `transport` takes.
    ///   - transport: what carries out each exchange.
    ///   - bodyFile: the temporary file the body is read from, owned by the send: removed when it ends.
    ///   - retriesOnTimeout: how many times a timed-out send starts again (without `retryPolicy`).
    ///   - retryPolicy: the rules every retry follows; nil: `retriesOnTimeout`, ASIHTTPRequest's.
    ///   - onResponseBody: given the decoded response body as it arrives, in order with `onEvent`'s
    ///     events (a response's bytes after its ``Event/responseHead(_:)``).
    ///   - keepsResponseBody: whether the finished response carries the body (false: it was
    ///     handed to `onResponseBody` only).
    ///   - responseDemand: how far `onResponseBody`'s consumer is behind: each exchange's
    ///     transport pauses receiving while it withholds demand (nil: it never does).
    ///   - onEvent: the façade's events, in order, one at a time.
    init(
        request: TransportRequest, transport: any FormDataTransport, bodyFile: TemporaryFile? = nil, retriesOnTimeout: Int = 0,
        retryPolicy: RetryPolicy? = nil,
        onResponseBody: (@Sendable (Data) -> Void)? = nil, keepsResponseBody: Bool = true, responseDemand: ResponseDemand? = nil,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.transport = transport
        self.onEvent = onEvent
        self.onResponseBody = onResponseBody
        self.keepsResponseBody = keepsResponseBody || onResponseBody == nil
        self.responseDemand = responseDemand
        self.bodyFile = bodyFile
        let capabilities = transport.capabilities
        machine = SendStateMachine(
            request: request,
            configuration: .init(
                retriesOnTimeout: retriesOnTimeout, redirectPolicy: transport.redirectPolicy,
                answersChallenges: capabilities.contains(.challengeAuthentication),
                transportDecodesContentEncoding: capabilities.contains(.decodesContentEncoding),
                idleTimeoutNanoseconds: SendStateMachine.Configuration.nanoseconds(fromSeconds: request.timeoutInterval),
                totalTimeoutNanoseconds: SendStateMachine.Configuration.nanoseconds(fromSeconds: request.totalTimeoutInterval),
                retryPolicy: retryPolicy,
                // Jitter is a policy's (ASI's rule retries at once): no random draw without one.
                randomSeed: retryPolicy == nil ? 0 : .random(in: .min ... .max)))
        // A body with streams is sent without resumption (a stream cannot be skipped into).
        if request.network.resumesInterruptedUploads, request.body.length > 0, request.body.segments?.streams.isEmpty ?? true {
            resumption = ResumableUploadStateMachine(
                maximumResumptions: request.network.maximumUploadResumptions,
                createsUploadFirst: !capabilities.contains(.informationalResponses))
        }
    }

    /// The upload's resumption URL (from the server's `104`) and how many times it was resumed.
    var uploadResumption: (url: URL?, count: Int) {
        lock.withLock { (resumption?.resumptionURL, resumption?.resumeCount ?? 0) }
    }

    /// Starts the send. What reaches the wire is checked once, here, whichever façade built the
    /// request: header names and values, and that the transport can apply its network options.
    func start() {
        let request = lock.withLock { machine.original }
        do throws(FormDataError) {
            try Self.validate(request, for: transport)
        } catch {
            handle(.refuse(error))
            return
        }
        handle(.start(now: SendTimer.now))
    }

    /// Cancels the send: it finishes with ``FormDataError/cancelled`` at once (its exchange is
    /// stopped), or when it starts if it has not yet.
    func cancel() { handle(.cancel) }

    /// Checks what reaches the wire, whichever route it takes: header names and values, the
    /// method, request cookies, credentials that go into headers; a caller's `Transfer-Encoding`.
    /// - Throws: ``FormDataError/invalidRequestHeader(name:value:)``,
    ///   ``FormDataError/invalidRequestMethod(method:)``, ``FormDataError/invalidRequestCookie(name:value:)``,
    ///   ``FormDataError/invalidCredential(field:)``; ``FormDataError/unableToCreateRequest(underlying:)``
    ///   naming an option the transport cannot apply.
    static func validate(_ request: TransportRequest, for transport: any FormDataTransport) throws(FormDataError) {
        // Cookies first: a façade may also have put them into a Cookie header.
        for cookie in request.network.requestCookies {
            try RequestHeaderValidation.requireValidCookie(name: cookie.name, value: cookie.value)
        }
        try RequestHeaderValidation.requireValid(request.headers)
        try RequestHeaderValidation.requireValidMethod(request.method)
        if let framing = request.headers.first(where: { $0.name.equalsIgnoringASCIICase("Transfer-Encoding") }),
            request.body.knownLength != nil || !framing.value.equalsIgnoringASCIICase("chunked")
        {
            // The body goes with its exact Content-Length, never chunked: a caller's framing
            // header would contradict it (the Content-Length + Transfer-Encoding ambiguity).
            // `chunked` is what a body of unknown length is sent as (the transport frames it).
            throw .invalidRequestHeader(name: framing.name, value: framing.value)
        }
        let network = request.network
        try RequestHeaderValidation.requireValidCredential(network.credentials?.user, field: "username")
        try RequestHeaderValidation.requireValidCredential(network.credentials?.password, field: "password")
        try RequestHeaderValidation.requireValidCredential(network.credentials?.domain, field: "domain")
        try RequestHeaderValidation.requireValidCredential(network.proxy?.credentials?.user, field: "proxyUsername")
        try RequestHeaderValidation.requireValidCredential(network.proxy?.credentials?.password, field: "proxyPassword")
        try RequestHeaderValidation.requireValidCredential(network.proxy?.credentials?.domain, field: "proxyDomain")
        let capabilities = transport.capabilities
        if let missing = request.network.requiredCapabilities.first(where: { !capabilities.contains($0.capability) }) {
            // Never a silently different request: a setting the transport cannot apply is an error.
            throw .unableToCreateRequest(
                underlying: UnderlyingError(
                    domain: "FormDataKit", code: 0,
                    message: "\(missing.option) is set but \(type(of: transport)) cannot apply it; send with CurlTransport"))
        }
    }

    // MARK: - Events

    /// Feeds `event` to the machine and carries out its actions; `data`: the body bytes of a
    /// ``SendStateMachine/Event/bodyReceived(id:count:now:)``.
    fileprivate func handle(_ event: SendStateMachine.Event, data: Data? = nil) {
        let (outside, drain, finished) = lock.withLock { () -> ([SendStateMachine.Action], Bool, Bool) in
            if case .exchangeEnded(let id, _, _) = event { tasks[id] = nil }
            var outside: [SendStateMachine.Action]
            if resumption == nil {
                outside = apply(machine.handle(event), exchange: event.exchangeID ?? 0, data: data)
            } else {
                outside = []
                // A stalled resumable upload resumes rather than timing out (the machine's clock).
                var steps: [ResumableUploadStateMachine.Step]?
                if case .clock(let now) = event, machine.isStalled(at: now) { steps = resumption!.stalled(now: now) }
                for step in steps ?? resumption!.incoming(event) {
                    switch step {
                    case .forward(let event):
                        outside += apply(machineHandle(event), exchange: event.exchangeID ?? 0, data: data)
                    case .startExchange(let id, let request):
                        outside.append(.startExchange(id: id, request: request))
                    case .cancelExchange(let id):
                        cancelledExchanges.insert(id)
                        outside.append(.cancelExchange(id: id))
                    }
                }
            }
            defer { claimedDrain = false }
            return (outside, claimedDrain, machine.isFinished)
        }
        if !outside.isEmpty { perform(outside) }
        if drain { drainOutbox() }
        // Nothing of a finished send stays referenced (a task holds its observer, which holds this).
        if finished { lock.withLock { tasks = [:] } }
    }

    /// The machine's actions for `event` (under `lock`), as the resumption carries them out.
    private func machineHandle(_ event: SendStateMachine.Event) -> [SendStateMachine.Action] {
        let actions = machine.handle(event)
        guard resumption != nil else { return actions }
        return actions.flatMap { resumption!.outgoing($0) }
    }

    /// Carries out the actions that need no transport call (under `lock`), returning the others.
    private func apply(_ actions: [SendStateMachine.Action], exchange: Int, data: Data?) -> [SendStateMachine.Action] {
        var outside: [SendStateMachine.Action] = []
        for action in actions {
            switch action {
            case .startExchange, .armTimer:
                outside.append(action)
            case .cancelExchange(let id):
                cancelledExchanges.insert(id)
                outside.append(action)
            case .reportProgress(let delta):
                enqueue(.progress(sent: delta < 0 ? 0 : machine.reportedBodyBytes, delta: delta))
            case .reportRetry(let count):
                post(.retrying(retryCount: count))
                collector = nil
            case .reportResponseHead(let head):
                post(.responseHead(head, url: machine.answerURL ?? machine.original.url))
                collector = ResponseBodyCollector(
                    head: head, transportDecodes: machine.configuration.transportDecodesContentEncoding,
                    decompressedLimit: machine.original.maximumDecompressedResponseSize)
                if onResponseBody != nil { collector = collector?.forwarding(keepingBody: keepsResponseBody) }
            case .keepResponseBody:
                guard let data else { continue }
                do throws(FormDataError) {
                    try collector?.append(data)
                    if onResponseBody != nil, let chunk = collector?.takeForwarded(), !chunk.isEmpty { enqueue(.responseBody(chunk)) }
                } catch {
                    outside += apply(machineHandle(.bodyFailed(id: exchange, error: error)), exchange: exchange, data: nil)
                }
            case .finish(let outcome):
                finish(outcome)
            }
        }
        return outside
    }

    /// The actions that call the transport or the clock, outside the lock. The clock is armed
    /// first: a transport's start may block (a file opened on a hung file system), and the send
    /// still ends by its own timeout (the exchange it gave up on is cancelled once its start returns).
    private func perform(_ actions: [SendStateMachine.Action]) {
        for case .armTimer(let deadline) in actions { arm(deadline) }
        for action in actions {
            switch action {
            case .startExchange(let id, let request):
                let task = transport.start(request, observer: ExchangeObserver(driver: self, id: id, responseDemand: responseDemand))
                let cancelNow = lock.withLock { () -> Bool in
                    if cancelledExchanges.contains(id) || machine.isFinished { return true }
                    tasks[id] = task
                    return false
                }
                if cancelNow { task.cancel() }
            case .cancelExchange(let id):
                lock.withLock { tasks.removeValue(forKey: id) }?.cancel()
            default:
                break  // the clock was armed above; the rest was done under the lock
            }
        }
    }

    /// Arms the idle clock for `deadline`, weakly: a finished send is not kept until its timer is
    /// due (an exchange in flight is kept alive by its transport, which holds its observer).
    private func arm(_ deadline: UInt64) {
        let token = SendTimer.schedule(at: deadline) { [weak self] in self?.handle(.clock(now: SendTimer.now)) }
        let finished = lock.withLock { () -> Bool in
            if !machine.isFinished { timer = token }
            return machine.isFinished
        }
        if finished { SendTimer.cancel(token) }
    }

    private func post(_ event: Event) { enqueue(.event(event)) }

    /// Queues `item` for the façade (under `lock`); the handler drains after releasing it.
    private func enqueue(_ item: SendDriverOutbox.Item) {
        if outbox.append(item) { claimedDrain = true }
    }

    /// Runs the façade's waiting events, and those queued meanwhile, on this thread (the drain's
    /// claimant, holding no lock: an event's handler may cancel the send).
    private func drainOutbox() {
        var batch: [SendDriverOutbox.Item] = []
        while lock.withLock({ outbox.take(into: &batch) }) {
            for item in batch {
                switch item {
                case .event(let event): onEvent(event)
                case .progress(let sent, let delta): onEvent(.progress(sent: sent, delta: delta))
                case .responseBody(let chunk): onResponseBody?(chunk)
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// The send is over (under `lock`): the response with its kept body, or the error; the
    /// body's temporary file is removed.
    private func finish(_ outcome: SendStateMachine.Outcome) {
        var result: Result<FormDataResponse, FormDataError>
        switch outcome {
        case .failure(let error):
            result = .failure(error)
        case .response(let head, let url, let authentication):
            do throws(FormDataError) {
                var collected = collector ?? ResponseBodyCollector()
                var response = FormDataResponse(
                    statusCode: head.statusCode, headers: head.headers, body: try collected.finish(), reasonPhrase: head.reasonPhrase,
                    url: url)
                response.authentication = authentication
                response.httpVersion = head.httpVersion
                result = .success(response)
            } catch {
                result = .failure(error)
            }
        }
        collector = nil
        if let timer { SendTimer.cancel(timer) }
        timer = nil
        bodyFile?.remove()
        bodyFile = nil
        post(.finished(result, retryCount: machine.retryCount))
    }
}

/// Tells a ``SendDriver`` what one exchange reports, tagged with the exchange's id; carries the
/// send's response demand to the transport.
private struct ExchangeObserver: ResponseDemandingObserver {
    let driver: SendDriver
    let id: Int
    let responseDemand: ResponseDemand?

    func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64) {
        driver.handle(.bodySent(id: id, totalBytesSent: totalBytesSent, now: SendTimer.now))
    }

    func transportDidReceiveInformationalResponse(_ head: TransportResponseHead) {
        driver.handle(.informationalResponse(id: id, head: head, now: SendTimer.now))
    }

    func transportDidReceiveResponse(_ head: TransportResponseHead) {
        driver.handle(.responseHead(id: id, head: head, now: SendTimer.now))
    }

    func transportDidReceiveBodyData(_ data: Data) {
        driver.handle(.bodyReceived(id: id, count: data.count, now: SendTimer.now), data: data)
    }

    func transportDidFinish(_ error: FormDataError?) {
        driver.handle(.exchangeEnded(id: id, error: error, now: SendTimer.now))
    }
}
