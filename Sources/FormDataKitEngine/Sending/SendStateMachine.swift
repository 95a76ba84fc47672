import FormDataKitBody
import FormDataKitWire
import Foundation

/// One send, as a value: events in, actions out. It owns everything a send is apart from moving
/// bytes — attempts and retries after timeouts, redirects, a challenge answered by sending again,
/// cancel, the idle clock, progress (monotonic within an attempt, ending at exactly the body
/// length, held back until the response head arrives), the response size limits, completion
/// exactly once, and the mapping to ``FormDataError``'s categories. ``SendDriver`` carries out
/// its actions; nothing here touches a socket, a thread or a clock.
struct SendStateMachine: Sendable {
    private enum State: Sendable {
        /// Not started (a cancel before the start is remembered).
        case idle(cancelled: Bool)
        /// Exchange `exchange` is in flight.
        case exchanging(Exchange)
        /// Waiting until `until` (monotonic nanoseconds) to send again.
        case waiting(until: UInt64)
        /// Finished: every later event is ignored.
        case finished
    }

    let configuration: Configuration
    /// The request as the caller made it (a retry starts from it again).
    let original: TransportRequest
    private var state = State.idle(cancelled: false)
    private var nextID = 1

    // Across exchanges.
    private var redirects = 0
    private var retrying: RetryBudget
    private var authRetries = 0
    private var lastChallenge: String?
    /// Response bytes received over the whole send, redirect bodies included.
    private var receivedBytes: UInt64 = 0

    // Progress of the current attempt.
    private var latestSent: Int64 = 0
    private var reportedSent: Int64 = 0
    private var headSeenThisExchange = false
    /// The URL of the request the last reported response head answers.
    private(set) var answerURL: URL?

    // The idle clock, and the whole send's deadline.
    private var lastActivity: UInt64 = 0
    private var timerDeadline: UInt64?
    private var totalDeadline: UInt64?

    /// A machine for sending `request` under `configuration` (`wallClock`: for a `Retry-After` date only).
    init(request: TransportRequest, configuration: Configuration, wallClock: @escaping @Sendable () -> Date = { Date() }) {
        (self.original, self.configuration) = (request, configuration)
        self.retrying = RetryBudget(configuration, wallClock: wallClock)
    }

    /// The number of body bytes the send has to deliver (`Int64.max` while a stream's length is
    /// not known: nothing caps the progress then, and it ends at what was sent).
    var bodyLength: Int64 { original.body.knownLength.map { Int64(clamping: $0) } ?? .max }

    /// What progress ends at: the body length, or what was sent of a body of unknown length.
    private var finalBodyLength: Int64 { original.body.knownLength == nil ? latestSent : bodyLength }

    /// Whether a byte of a body that cannot be read again (``StreamedContent`` without a factory)
    /// went out in an attempt: then it is never sent again.
    private var unreplayableBodySent = false

    /// The body bytes reported so far in this attempt: the sum of its
    /// `Action/reportProgress(delta:)` deltas (0 again once a timed-out attempt is taken back).
    var reportedBodyBytes: Int64 { reportedSent }

    /// How many times the send was started again (after a timeout; with a ``RetryPolicy``, for
    /// any reason it allows).
    var retryCount: Int { retrying.retries }

    /// Whether the send has finished.
    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Handles `event`; returns what to do, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start(let now): return start(now: now)
        case .refuse(let error):
            guard case .idle = state else { return [] }
            state = .finished
            return [.finish(.failure(error))]
        case .cancel: return cancel()
        case .clock(let now): return clock(now: now)
        case .resumed(let id, let now):
            guard current(id) != nil else { return [] }
            touch(now)
            timerDeadline = nextDeadline()
            return timerDeadline.map { [.armTimer(deadline: $0)] } ?? []
        case .bodySent(let id, let total, let now):
            guard current(id) != nil else { return [] }
            touch(now)
            latestSent = max(latestSent, min(total, bodyLength))
            if total > 0, !original.body.isReplayable { unreplayableBodySent = true }
            return progress()
        case .informationalResponse(let id, _, let now):
            guard current(id) != nil else { return [] }
            touch(now)
            return []
        case .responseHead(let id, let head, let now):
            guard var exchange = current(id) else { return [] }
            touch(now)
            if let challenge = head.header(head.statusCode == 407 ? "Proxy-Authenticate" : "WWW-Authenticate") {
                lastChallenge = challenge
            }
            exchange.head = head
            headSeenThisExchange = true
            state = .exchanging(exchange)
            var actions = progress()
            // Decided at its head, and the head reported as it arrives: only a 401/407 may be
            // replaced by a later head (a transport answering the challenge itself), so it waits
            // for its first body byte or its end. A refused redirect is not read at all.
            if exchange.settled == nil, head.statusCode != 401, head.statusCode != 407 { actions += settle(&exchange) }
            return actions
        case .bodyReceived(let id, let count, let now):
            guard var exchange = current(id) else { return [] }
            touch(now)
            var actions = settle(&exchange)
            if isFinished { return actions }
            receivedBytes += UInt64(count)
            if exchange.settled == .answer { exchange.answerBytes += UInt64(count) }
            if let error = limitExceeded(exchange) {
                state = .finished
                return actions + [.cancelExchange(id: id), .finish(.failure(error))]
            }
            if exchange.settled == .answer { actions.append(.keepResponseBody) }
            state = .exchanging(exchange)
            return actions
        case .bodyFailed(let id, let error):
            guard current(id) != nil else { return [] }
            state = .finished
            return [.cancelExchange(id: id), .finish(.failure(error))]
        case .exchangeEnded(let id, let error, let now):
            guard var exchange = current(id) else { return [] }
            touch(now)
            if let error { return retryOrFail(error, now: now) }
            let actions = settle(&exchange)
            if isFinished { return actions }
            return actions.isEmpty ? ended(exchange, now: now) : actions + ended(exchange, now: now)
        }
    }

    // MARK: - Start, cancel, clock

    private mutating func start(now: UInt64) -> [Action] {
        guard case .idle(let cancelled) = state else { return [] }
        if cancelled {
            state = .finished
            return [.finish(.failure(.cancelled))]
        }
        if configuration.totalTimeoutNanoseconds > 0 { totalDeadline = now + configuration.totalTimeoutNanoseconds }
        return begin(original, now: now)
    }

    /// Starts an exchange of `request`; `resend` says why a body is sent again (a retry, a
    /// redirect, a challenge): a body whose stream cannot be read again and already went out
    /// fails the send instead, saying why.
    private mutating func begin(_ request: TransportRequest, now: UInt64, resend: String? = nil) -> [Action] {
        if let resend, let refusal = refusedResend(of: request, reason: resend) { return refusal }
        let id = nextID
        nextID += 1
        state = .exchanging(Exchange(id: id, request: request))
        headSeenThisExchange = false
        touch(now)
        guard timerDeadline == nil, let deadline = nextDeadline() else { return [.startExchange(id: id, request: request)] }
        timerDeadline = deadline
        return [.startExchange(id: id, request: request), .armTimer(deadline: deadline)]
    }

    /// When the clock is next needed: the idle deadline or the total one, whichever comes first.
    private func nextDeadline() -> UInt64? {
        let idle = configuration.idleTimeoutNanoseconds > 0 ? lastActivity + configuration.idleTimeoutNanoseconds : nil
        switch (idle, totalDeadline) {
        case (let idle?, let total?): return min(idle, total)
        case (let idle?, nil): return idle
        case (nil, let total): return total
        }
    }

    private mutating func cancel() -> [Action] {
        switch state {
        case .idle:
            state = .idle(cancelled: true)
            return []
        case .exchanging(let exchange):
            state = .finished
            return [.cancelExchange(id: exchange.id), .finish(.failure(.cancelled))]
        case .waiting:
            state = .finished
            return [.finish(.failure(.cancelled))]
        case .finished:
            return []
        }
    }

    private mutating func clock(now: UInt64) -> [Action] {
        timerDeadline = nil
        if case .waiting(let until) = state {
            if let total = totalDeadline, now >= total { return totalTimeUp(cancelling: []) }
            if now >= until { return begin(original, now: now, resend: "a retry") }
            return armWake(until)
        }
        guard case .exchanging(let exchange) = state else { return [] }
        if let total = totalDeadline, now >= total { return totalTimeUp(cancelling: [.cancelExchange(id: exchange.id)]) }
        let limit = configuration.idleTimeoutNanoseconds
        let idle = now > lastActivity ? now - lastActivity : 0
        guard limit > 0, idle >= limit else {
            guard let deadline = nextDeadline() else { return [] }
            timerDeadline = deadline
            return [.armTimer(deadline: deadline)]
        }
        let seconds = Double(limit) / 1e9
        let error = FormDataError.timedOut(
            underlying: UnderlyingError(domain: "FormDataKit", code: 0, message: "No bytes sent or received for \(seconds) s"))
        return [.cancelExchange(id: exchange.id)] + retryOrFail(error, now: now)
    }

    /// Whether the exchange in flight has had no byte either way for the idle timeout at `now`,
    /// before the whole send's deadline: the clock would time it out. A resumable upload resumes
    /// from there instead (``Event/resumed(id:now:)``).
    func isStalled(at now: UInt64) -> Bool {
        let limit = configuration.idleTimeoutNanoseconds
        guard case .exchanging = state, limit > 0, totalDeadline.map({ now < $0 }) ?? true else { return false }
        return now > lastActivity && now - lastActivity >= limit
    }

    private mutating func totalTimeUp(cancelling: [Action]) -> [Action] {
        state = .finished
        return cancelling + [.finish(.failure(configuration.totalTimeoutError))]
    }

    /// The attempt failed with `error`: sent again when the retry rules allow, else the send fails.
    private mutating func retryOrFail(_ error: FormDataError, now: UInt64) -> [Action] {
        // A redirect followed, a challenge answered or body bytes of the answer: a response begun.
        let answerBytes = if case .exchanging(let exchange) = state { exchange.answerBytes } else { UInt64(0) }
        let answered: RetryPolicy.AttemptPhase? =
            redirects > 0 || authRetries > 0 || answerBytes > 0 ? .responseBegun : headSeenThisExchange ? .headReceived : nil
        guard let wait = retrying.wait(after: error, answered: answered, request: original) else {
            state = .finished
            return [.finish(.failure(error))]
        }
        return retry(afterNanoseconds: wait, now: now)
    }

    /// The end of the send when `request` would send again a body whose one-shot stream already
    /// went out (`reason`: why it would), else nil.
    private mutating func refusedResend(of request: TransportRequest, reason: String) -> [Action]? {
        guard unreplayableBodySent, request.body != .none, !request.body.isReplayable else { return nil }
        let field = request.body.segments?.streams.first { !$0.isReplayable }?.field ?? "body"
        state = .finished
        return [.finish(.failure(.streamNotReplayable(field: field, reason: reason)))]
    }

    /// Arms the clock for the end of a wait (or the total deadline, if it comes first).
    private mutating func armWake(_ until: UInt64) -> [Action] {
        timerDeadline = totalDeadline.map { min($0, until) } ?? until
        return [.armTimer(deadline: timerDeadline ?? until)]
    }

    /// Starts the send again from the original request, at once or after `wait` nanoseconds.
    private mutating func retry(afterNanoseconds wait: UInt64, now: UInt64) -> [Action] {
        if let refusal = refusedResend(of: original, reason: "a retry") { return refusal }
        let count = retrying.count()
        (redirects, authRetries) = (0, 0)
        var actions: [Action] = []
        if reportedSent > 0 { actions.append(.reportProgress(delta: -reportedSent)) }
        latestSent = 0
        reportedSent = 0
        actions.append(.reportRetry(retryCount: count))
        guard wait > 0 else { return actions + begin(original, now: now, resend: "a retry") }
        state = .waiting(until: now + wait)
        return actions + armWake(now + wait)
    }

    // MARK: - Exchanges

    private func current(_ id: Int) -> Exchange? {
        guard case .exchanging(let exchange) = state, exchange.id == id else { return nil }
        return exchange
    }

    private mutating func touch(_ now: UInt64) { lastActivity = max(lastActivity, now) }

    /// Progress to report: bytes sent beyond what was reported, the last byte held back until a
    /// response head arrived.
    private mutating func progress() -> [Action] {
        let cap = headSeenThisExchange ? bodyLength : max(0, bodyLength - 1)
        let deliverable = min(latestSent, cap)
        guard deliverable > reportedSent else { return [] }
        defer { reportedSent = deliverable }
        return [.reportProgress(delta: deliverable - reportedSent)]
    }

    /// Decides what the exchange's response is for, once: at its first body byte or its end.
    private mutating func settle(_ exchange: inout Exchange) -> [Action] {
        guard exchange.settled == nil else { return [] }
        guard let head = exchange.head else {
            // Ended without a head: the transport reports that as a failure.
            exchange.settled = .answer
            return []
        }
        if let policy = configuration.redirectPolicy, isRedirect(head), let location = head.header("Location") {
            let target = URL(string: location, relativeTo: exchange.request.url)?.absoluteURL
            switch policy.decide(after: exchange.request, statusCode: head.statusCode, location: target, redirectsSoFar: redirects) {
            case .follow(let next):
                exchange.settled = .follow(next)
                state = .exchanging(exchange)
                return []
            case .refuse(let error):
                state = .finished
                return [.cancelExchange(id: exchange.id), .finish(.failure(error))]
            case .deliver:
                break
            }
        }
        if let schemes = challengeToAnswer(exchange, head: head, authRetries: authRetries) {
            exchange.settled = .answerChallenge(schemes)
            state = .exchanging(exchange)
            return []
        }
        if let wait = retrying.wait(afterResponse: head) {
            exchange.settled = .retryAfter(wait)
            state = .exchanging(exchange)
            return []
        }
        exchange.settled = .answer
        answerURL = exchange.request.url
        state = .exchanging(exchange)
        var actions: [Action] = []
        actions.reserveCapacity(2)  // the first body bytes add .keepResponseBody
        actions.append(.reportResponseHead(head))
        return actions
    }

    /// The error when the response has grown past a limit, else nil.
    private func limitExceeded(_ exchange: Exchange) -> FormDataError? {
        let limits = original
        if exchange.settled == .answer, let head = exchange.head, head.isContentEncoded,
            configuration.transportDecodesContentEncoding
        {
            // Decoded bytes: the decompressed limit is the one that applies to them.
            if exchange.answerBytes > limits.maximumDecompressedResponseSize {
                return .compression(underlying: .decompressedSizeLimitExceeded(limit: limits.maximumDecompressedResponseSize))
            }
            return nil
        }
        return receivedBytes > limits.maximumResponseSize ? .responseTooLarge(limit: limits.maximumResponseSize) : nil
    }

    /// Exchange `exchange` ended with a whole response.
    private mutating func ended(_ exchange: Exchange, now: UInt64) -> [Action] {
        switch exchange.settled {
        case .follow(let next)?:
            redirects += 1
            return begin(next, now: now, resend: "a redirect that sends the body again")
        case .answerChallenge(let schemes)?:
            authRetries += 1
            var next = exchange.request
            next.network.challengeSchemes = schemes
            return begin(next, now: now, resend: "an authentication challenge answered by sending again")
        case .retryAfter(let wait)?:
            return retry(afterNanoseconds: wait, now: now)
        case .answer?, nil:
            state = .finished
            guard let head = exchange.head else {
                return [
                    .finish(
                        .failure(
                            .connectionFailure(
                                underlying: UnderlyingError(domain: "FormDataKit", code: 0, message: "The server sent no HTTP response"))))
                ]
            }
            if head.statusCode == 401 || head.statusCode == 407 {
                return [.finish(.failure(AuthenticationChallenge.authenticationNeeded(head)))]
            }
            if head.statusCode == 411, exchange.request.body.knownLength == nil {
                return [.finish(.failure(.lengthRequired(url: exchange.request.url.absoluteString)))]
            }
            let authentication = AuthenticationOutcome(
                of: exchange.request, answersChallenges: configuration.answersChallenges, lastChallenge: lastChallenge,
                retries: authRetries)
            let finish = Action.finish(.response(head, url: exchange.request.url, authentication: authentication))
            let length = finalBodyLength
            guard length > reportedSent else { return [finish] }
            defer { reportedSent = length }
            return [.reportProgress(delta: length - reportedSent), finish]
        }
    }
}
