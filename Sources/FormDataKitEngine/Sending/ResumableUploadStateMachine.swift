import FormDataKitBody
import FormDataKitWire
import Foundation

/// Resumes an interrupted upload, as a value: it sits between a ``SendDriver`` and its
/// ``SendStateMachine`` and makes the offset (`HEAD`) and append (`PATCH`) exchanges of
/// ``ResumableUploadProtocol`` look like the one exchange they continue, so the send machine's
/// rules (timeouts, redirects, progress, limits, completion once) apply unchanged.
///
/// The send machine's exchanges are announced as resumable. A `104` with `Location` gives the
/// upload's URL. When that exchange then fails before any response head (the connection was
/// lost mid-body), the failure is held back and the offset is asked; the rest of the body goes
/// from the server's offset; a `409` (offset mismatch) or another loss asks again. Each offset
/// request counts as one resumption, at most ``maximumResumptions``; past that the
/// send fails with ``ResumableUploadProtocol/limitReached(_:lastError:)``. An exchange that
/// stalls (no byte either way for the idle timeout: a black hole, a dead link) is resumed the same
/// way while resumptions are left (``stalled(now:)``), and times out past them. An exchange without a
/// `104` (a server without support) fails as an ordinary send does. The exchanges it starts have
/// negative ids, the send machine's positive ones.
///
/// For a transport that cannot report a `104` (``createsUploadFirst``), the send machine's
/// exchange is not sent as it is: an `OPTIONS` asks whether the server resumes uploads (once per
/// send); if it does, a creation request without the content gets the upload's URL (`201` with
/// `Location`) and the whole body goes as an append from offset 0, resumed as above; if it does
/// not, the exchange goes as an ordinary send. A creation answered otherwise (a `401`, a `413`)
/// is the exchange's answer.
///
/// The upload never moves to another origin (``OriginRule``): a `104` or `201` whose `Location`
/// names another scheme, host or port is disregarded, and the upload goes to the origin as an
/// ordinary send — not resumable, with nothing of it (credentials, cookies, fields, body) sent
/// elsewhere.
struct ResumableUploadStateMachine: Sendable {
    /// What the driver does: hand an event to the send machine, or start or stop an exchange.
    enum Step: Sendable, Equatable {
        /// Give the send machine this event (of its own exchange).
        case forward(SendStateMachine.Event)
        /// Start exchange `id` (an offset or append request) on the transport.
        case startExchange(id: Int, request: TransportRequest)
        /// Stop exchange `id`.
        case cancelExchange(id: Int)
    }

    private enum Phase: Sendable, Equatable {
        /// The send machine's exchange is on the wire itself.
        case direct
        /// Exchange `id` asks (`OPTIONS`) whether the server resumes uploads; `supported` once
        /// its head said so.
        case probing(id: Int, supported: Bool)
        /// Exchange `id` creates the upload; `location` once its `201` gave one; `answered` once
        /// its head was forwarded as the response (it was not a creation).
        case creating(id: Int, location: URL?, answered: Bool)
        /// Exchange `id` asks the offset; `offset` once its head gave one.
        case asking(id: Int, offset: UInt64?, status: Int?)
        /// Exchange `id` appends from `offset`; `conflict` once it answered 409;
        /// `answered` once its head was forwarded as the response.
        case appending(id: Int, offset: UInt64, conflict: Bool, answered: Bool)
    }

    /// How many times an interrupted upload is resumed before the send fails.
    let maximumResumptions: Int
    /// The upload's URL, from the `104` of the current exchange (nil until one arrived).
    private(set) var resumptionURL: URL?
    /// How many times the upload was resumed (offset requests after a loss) over the send.
    private(set) var resumeCount = 0
    /// Whether the upload is created before its content is sent (the transport cannot report
    /// the `104` that gives the upload's URL otherwise).
    let createsUploadFirst: Bool
    /// Whether the server resumes uploads, once an `OPTIONS` said (``createsUploadFirst`` only).
    private var serverSupport: Bool?
    /// The status of a creation answered with success but no upload URL.
    private var creationStatus: Int?
    /// Whether the creation's `201` named an upload on another origin, where the upload does
    /// not move (``OriginRule``): the body goes to the origin as an ordinary send instead.
    private var createdElsewhere = false

    /// The send machine's current exchange and its request.
    private var logical: (id: Int, request: TransportRequest)?
    private var phase = Phase.direct
    private var headSeen = false
    private var lastError: FormDataError?
    private var nextID = -1

    /// A machine that resumes at most `maximumResumptions` times per send; `createsUploadFirst`
    /// for a transport that cannot report a `104` interim response.
    init(maximumResumptions: Int, createsUploadFirst: Bool = false) {
        self.maximumResumptions = max(0, maximumResumptions)
        self.createsUploadFirst = createsUploadFirst
    }

    // MARK: - The send machine's actions

    /// The send machine's `action` as the driver carries it out: exchanges it starts are
    /// announced as resumable; a cancel of its exchange also stops an offset or append in flight.
    mutating func outgoing(_ action: SendStateMachine.Action) -> [SendStateMachine.Action] {
        switch action {
        case .startExchange(let id, let request):
            logical = (id, request)
            phase = .direct
            headSeen = false
            resumptionURL = nil
            guard createsUploadFirst else { return [.startExchange(id: id, request: ResumableUploadProtocol.announcing(request))] }
            switch serverSupport {
            case nil:
                let probe = takeID()
                phase = .probing(id: probe, supported: false)
                return [.startExchange(id: probe, request: ResumableUploadProtocol.optionsRequest(for: request))]
            case true?:
                let creation = create(request)
                return [.startExchange(id: creation.id, request: creation.request)]
            case false?:
                return [action]
            }
        case .cancelExchange(let id):
            guard logical?.id == id else { return [action] }
            let inFlight = phaseExchange
            phase = .direct
            logical = nil
            return [action] + (inFlight.map { [.cancelExchange(id: $0)] } ?? [])
        default:
            return [action]
        }
    }

    // MARK: - Transport events

    /// What to do with a transport's `event`.
    mutating func incoming(_ event: SendStateMachine.Event) -> [Step] {
        guard let id = event.exchangeID, let logical else { return [.forward(event)] }
        if id == logical.id { return direct(event, logical: logical) }
        guard id == phaseExchange else { return [] }
        switch phase {
        case .direct: return []
        case .probing: return probing(event, logical: logical)
        case .creating: return creating(event, logical: logical)
        case .asking: return asking(event, logical: logical)
        case .appending: return appending(event, logical: logical)
        }
    }

    /// The exchange in flight for the current phase (nil when the send machine's own is).
    private var phaseExchange: Int? {
        switch phase {
        case .direct: return nil
        case .probing(let id, _), .creating(let id, _, _), .asking(let id, _, _), .appending(let id, _, _, _): return id
        }
    }

    private mutating func direct(_ event: SendStateMachine.Event, logical: (id: Int, request: TransportRequest)) -> [Step] {
        guard phase == .direct else { return [] }
        switch event {
        case .informationalResponse(_, let head, _):
            // A `Location` on another origin is disregarded: the upload goes on, not resumable.
            if let url = sameOrigin(ResumableUploadProtocol.resumptionURL(in: head, requestURL: logical.request.url), as: logical.request) {
                resumptionURL = url
            }
        case .responseHead:
            headSeen = true
        case .exchangeEnded(_, let error?, let now) where resumable(error):
            return resume(after: error, now: now, logical: logical)
        default:
            break
        }
        return [.forward(event)]
    }

    private mutating func probing(_ event: SendStateMachine.Event, logical: (id: Int, request: TransportRequest)) -> [Step] {
        guard case .probing(let id, let supported) = phase else { return [] }
        switch event {
        case .responseHead(_, let head, _):
            phase = .probing(id: id, supported: ResumableUploadProtocol.supportsResumableUploads(head))
            return []
        case .exchangeEnded(_, nil, _):
            serverSupport = supported
            guard supported else {
                // An ordinary send: the exchange itself, as the send machine made it.
                phase = .direct
                return [.startExchange(id: logical.id, request: logical.request)]
            }
            let creation = create(logical.request)
            return [.startExchange(id: creation.id, request: creation.request)]
        case .exchangeEnded(_, let error?, let now):
            // Nothing of the body went: the send machine's rules (a retry of a failed connect) apply.
            phase = .direct
            return [.forward(.exchangeEnded(id: logical.id, error: error, now: now))]
        default:
            return []
        }
    }

    private mutating func creating(_ event: SendStateMachine.Event, logical: (id: Int, request: TransportRequest)) -> [Step] {
        guard case .creating(let id, let location, let answered) = phase else { return [] }
        switch event {
        case .responseHead(_, let head, let now):
            if let created = ResumableUploadProtocol.createdUploadURL(in: head, requestURL: logical.request.url) {
                let kept = sameOrigin(created, as: logical.request)
                createdElsewhere = kept == nil
                phase = .creating(id: id, location: kept, answered: false)
                return []
            }
            if (200..<300).contains(head.statusCode) {
                // A success without the upload's URL: the body was never sent, so it cannot be
                // the send's answer (it fails when the exchange ends).
                creationStatus = head.statusCode
                return []
            }
            // Not a creation (a 401, a 413, a server that refused it): the exchange's answer.
            headSeen = true
            phase = .creating(id: id, location: nil, answered: true)
            return [.forward(.responseHead(id: logical.id, head: head, now: now))]
        case .bodyReceived(_, let count, let now):
            return answered ? [.forward(.bodyReceived(id: logical.id, count: count, now: now))] : []
        case .exchangeEnded(_, let error, let now):
            if error == nil, !answered, let location {
                // Created: the whole body goes as an append from 0, resumable from here on.
                resumptionURL = location
                let next = takeID()
                phase = .appending(id: next, offset: 0, conflict: false, answered: false)
                let append = ResumableUploadProtocol.appendRequest(
                    for: logical.request, location: location, offset: 0, freshConnection: false)
                return [.startExchange(id: next, request: append)]
            }
            if error == nil, !answered, createdElsewhere {
                // The upload would live on another origin: not there. The exchange goes to the
                // origin as an ordinary send (nothing of the body went yet), and so do the
                // send's later ones.
                serverSupport = false
                phase = .direct
                return [.startExchange(id: logical.id, request: logical.request)]
            }
            if error == nil, !answered, let status = creationStatus {
                return fail(
                    ResumableUploadProtocol.uploadNotCreated(statusCode: status, url: logical.request.url), now: now, logical: logical)
            }
            phase = .direct
            return [.forward(.exchangeEnded(id: logical.id, error: error, now: now))]
        default:
            return []
        }
    }

    /// The exchange that creates the upload of `request` (``createsUploadFirst``), now the phase's.
    private mutating func create(_ request: TransportRequest) -> (id: Int, request: TransportRequest) {
        let id = takeID()
        phase = .creating(id: id, location: nil, answered: false)
        creationStatus = nil
        createdElsewhere = false
        return (id, ResumableUploadProtocol.creationRequest(for: request))
    }

    private mutating func asking(_ event: SendStateMachine.Event, logical: (id: Int, request: TransportRequest)) -> [Step] {
        guard case .asking(let id, let offset, let status) = phase, let location = resumptionURL else { return [] }
        switch event {
        case .responseHead(_, let head, _):
            let given = (200..<300).contains(head.statusCode) ? ResumableUploadProtocol.offset(in: head) : nil
            phase = .asking(id: id, offset: given, status: head.statusCode)
            return []
        case .exchangeEnded(_, let error?, let now):
            return resumable(error) ? resume(after: error, now: now, logical: logical) : fail(error, now: now, logical: logical)
        case .exchangeEnded(_, nil, let now):
            guard let offset, offset <= logical.request.body.length else {
                let error = ResumableUploadProtocol.offsetUnavailable(statusCode: status ?? 0, location: location)
                return fail(error, now: now, logical: logical)
            }
            let next = takeID()
            phase = .appending(id: next, offset: offset, conflict: false, answered: false)
            let request = ResumableUploadProtocol.appendRequest(for: logical.request, location: location, offset: offset)
            // Progress continues from the server's offset (never below what was reported).
            return [
                .forward(.bodySent(id: logical.id, totalBytesSent: Int64(offset), now: now)),
                .startExchange(id: next, request: request),
            ]
        default:
            return []
        }
    }

    private mutating func appending(_ event: SendStateMachine.Event, logical: (id: Int, request: TransportRequest)) -> [Step] {
        guard case .appending(let id, let offset, let conflict, let answered) = phase else { return [] }
        switch event {
        case .bodySent(_, let total, let now):
            return [.forward(.bodySent(id: logical.id, totalBytesSent: Int64(offset) + total, now: now))]
        case .informationalResponse:
            return []
        case .responseHead(_, let head, let now):
            if head.statusCode == ResumableUploadProtocol.offsetMismatch {
                phase = .appending(id: id, offset: offset, conflict: true, answered: false)
                return []
            }
            headSeen = true
            phase = .appending(id: id, offset: offset, conflict: false, answered: true)
            return [.forward(.responseHead(id: logical.id, head: head, now: now))]
        case .bodyReceived(_, let count, let now):
            return conflict ? [] : [.forward(.bodyReceived(id: logical.id, count: count, now: now))]
        case .bodyFailed(_, let error):
            return [.cancelExchange(id: id), .forward(.bodyFailed(id: logical.id, error: error))]
        case .exchangeEnded(_, let error, let now):
            if conflict, error == nil { return ask(now: now, logical: logical) }
            if let error, !answered, resumable(error) { return resume(after: error, now: now, logical: logical) }
            phase = .direct
            return [.forward(.exchangeEnded(id: logical.id, error: error, now: now))]
        default:
            return []
        }
    }

    // MARK: - Resuming

    /// The send machine's exchange stalled: no byte either way for the idle timeout
    /// (``SendStateMachine/isStalled(at:)``), as when a middlebox or a dead link swallows the
    /// connection without a reset. When the upload can be resumed — its URL known, no response
    /// head, resumptions left — the exchange on the wire (the first, an offset request or an
    /// unanswered append) is stopped and the offset asked on a new connection, one more
    /// resumption, and the send machine's idle clock starts again; nil otherwise (the send times
    /// out as before).
    mutating func stalled(now: UInt64) -> [Step]? {
        guard let logical, resumptionURL != nil, !headSeen, resumeCount < maximumResumptions else { return nil }
        let onWire: Int
        switch phase {
        case .direct: onWire = logical.id
        case .asking(let id, _, _): onWire = id
        case .appending(let id, _, _, let answered) where !answered: onWire = id
        default: return nil
        }
        lastError = .timedOut(underlying: UnderlyingError(domain: "FormDataKit", code: 0, message: "No bytes sent or received"))
        return [.cancelExchange(id: onWire)] + ask(now: now, logical: logical) + [.forward(.resumed(id: logical.id, now: now))]
    }

    /// Whether a failure can be resumed: the connection was lost (not a timeout, not a cancel),
    /// no response head arrived, and a `104` gave the upload's URL.
    private func resumable(_ error: FormDataError) -> Bool {
        guard resumptionURL != nil, !headSeen, case .connectionFailure(let underlying) = error else { return false }
        return underlying.domain != ResumableUploadProtocol.errorDomain
    }

    /// The upload was interrupted by `error`: ask the offset, if resumptions are left.
    private mutating func resume(after error: FormDataError, now: UInt64, logical: (id: Int, request: TransportRequest)) -> [Step] {
        lastError = error
        return ask(now: now, logical: logical)
    }

    /// Starts an offset request: one more resumption (a loss, or a `409` asking again), failing
    /// past the limit.
    private mutating func ask(now: UInt64, logical: (id: Int, request: TransportRequest)) -> [Step] {
        guard let location = resumptionURL, resumeCount < maximumResumptions else {
            return fail(ResumableUploadProtocol.limitReached(maximumResumptions, lastError: lastError), now: now, logical: logical)
        }
        resumeCount += 1
        let next = takeID()
        phase = .asking(id: next, offset: nil, status: nil)
        return [.startExchange(id: next, request: ResumableUploadProtocol.offsetRequest(for: logical.request, location: location))]
    }

    /// The send machine's exchange fails with `error` (the resumption is over).
    private mutating func fail(_ error: FormDataError, now: UInt64, logical: (id: Int, request: TransportRequest)) -> [Step] {
        phase = .direct
        self.logical = nil
        return [.forward(.exchangeEnded(id: logical.id, error: error, now: now))]
    }

    /// `url`, an upload's URL a server named answering `request`, if the upload may move there:
    /// the request's own origin only (``OriginRule``); nil otherwise.
    private func sameOrigin(_ url: URL?, as request: TransportRequest) -> URL? {
        guard let url, OriginRule.judge(url, from: request.url) == .sameOrigin else { return nil }
        return url
    }

    private mutating func takeID() -> Int {
        defer { nextID -= 1 }
        return nextID
    }
}
