import FormDataKitBody
import FormDataKitWire
import Foundation

extension SendStateMachine {
    /// What a send may do beyond one exchange, fixed when it starts.
    struct Configuration: Sendable, Equatable {
        /// How many times a send that timed out is started again (ASIHTTPRequest's
        /// `numberOfTimesToRetryOnTimeout`); not used when ``retryPolicy`` is set.
        var retriesOnTimeout = 0
        /// The rules redirects are followed by; nil: a redirect is the response.
        var redirectPolicy: RedirectPolicy? = RedirectPolicy()
        /// Whether the transport answers authentication challenges with the request's credentials
        /// (``TransportCapabilities/challengeAuthentication``): a 401 after pre-emptive Basic that
        /// offers another scheme is then answered by sending again.
        var answersChallenges = false
        /// Whether the transport undoes a response's content encoding itself
        /// (``TransportCapabilities/decodesContentEncoding``): body bytes then arrive decoded.
        var transportDecodesContentEncoding = true
        /// Nanoseconds without any bytes sent or received before an exchange times out; 0: never.
        var idleTimeoutNanoseconds: UInt64 = 0
        /// Nanoseconds the whole send may take, every attempt included; 0: no limit.
        var totalTimeoutNanoseconds: UInt64 = 0
        /// The rules every retry follows; nil: ASIHTTPRequest's, ``retriesOnTimeout`` immediate
        /// retries of any timeout.
        var retryPolicy: RetryPolicy?
        /// The seed of the retry backoff's jitter.
        var randomSeed: UInt64 = 0

        /// The idle timeout of `seconds` (0 or less, or not a number: none; huge values clamped).
        static func nanoseconds(fromSeconds seconds: TimeInterval) -> UInt64 {
            guard seconds > 0, !seconds.isNaN else { return 0 }
            return UInt64(min(seconds, 1e9) * 1e9)
        }
    }

    /// What the runner does next. Actions come out of an event in the order they are to be
    /// carried out.
    enum Action: Sendable, Equatable {
        /// Start exchange `id`: send `request` on the transport.
        case startExchange(id: Int, request: TransportRequest)
        /// Stop exchange `id` (its later events are ignored).
        case cancelExchange(id: Int)
        /// Deliver a ``Event/clock(now:)`` at `deadline` (monotonic nanoseconds), unless one is due earlier.
        case armTimer(deadline: UInt64)
        /// Body bytes went out: `delta` more (negative: a timed-out attempt's bytes taken back
        /// before it is sent again, as ASIHTTPRequest reported them).
        case reportProgress(delta: Int64)
        /// The send starts again after a timeout; `retryCount` attempts have been retried.
        case reportRetry(retryCount: Int)
        /// The head of the response that will be the answer (not a redirect followed, not a
        /// challenge answered).
        case reportResponseHead(TransportResponseHead)
        /// The body bytes of the event just handled belong to the response: keep them.
        case keepResponseBody
        /// The send is over (exactly once).
        case finish(Outcome)
    }

    /// How a send ended.
    enum Outcome: Sendable, Equatable {
        /// The response: its head, the URL that answered, how the request authenticated. The
        /// body is what the runner kept.
        case response(TransportResponseHead, url: URL, authentication: AuthenticationOutcome)
        /// The send failed, in ASIHTTPRequest's categories.
        case failure(FormDataError)
    }

    /// What happened. Exchange events carry the exchange's id; those of an exchange that is no
    /// longer current (cancelled, timed out, replaced) are ignored. `now` is monotonic nanoseconds.
    enum Event: Sendable, Equatable {
        /// Start the send.
        case start(now: UInt64)
        /// The send cannot start (its request was refused before anything was sent).
        case refuse(FormDataError)
        /// `totalBytesSent` body bytes of exchange `id` are on the wire.
        case bodySent(id: Int, totalBytesSent: Int64, now: UInt64)
        /// A 1xx response arrived on exchange `id`.
        case informationalResponse(id: Int, head: TransportResponseHead, now: UInt64)
        /// A response head arrived on exchange `id` (a transport answering a challenge itself may
        /// report more than one; the last is the response).
        case responseHead(id: Int, head: TransportResponseHead, now: UInt64)
        /// `count` response body bytes arrived on exchange `id`.
        case bodyReceived(id: Int, count: Int, now: UInt64)
        /// The kept response body could not be decoded (or grew past its decoded limit).
        case bodyFailed(id: Int, error: FormDataError)
        /// Exchange `id` ended: nil when the whole response arrived, else why it failed.
        case exchangeEnded(id: Int, error: FormDataError?, now: UInt64)
        /// The caller cancelled the send.
        case cancel
        /// A timer armed with ``Action/armTimer(deadline:)`` is due.
        case clock(now: UInt64)
        /// Exchange `id` stalled (``SendStateMachine/isStalled(at:)``) and goes on another way: a
        /// resumable upload asks its offset on a new connection. Activity: the idle clock starts again.
        case resumed(id: Int, now: UInt64)

        /// The exchange an exchange event is about; nil for the others.
        var exchangeID: Int? {
            switch self {
            case .bodySent(let id, _, _), .informationalResponse(let id, _, _), .responseHead(let id, _, _),
                .bodyReceived(let id, _, _), .bodyFailed(let id, _), .exchangeEnded(let id, _, _), .resumed(let id, _):
                return id
            case .start, .refuse, .cancel, .clock:
                return nil
            }
        }
    }
}

extension SendStateMachine {
    /// What the response of an exchange is for, once its head is settled.
    enum Settled: Sendable, Equatable {
        /// The response: its body is kept.
        case answer
        /// A redirect to follow with this request once the exchange ends (its body is dropped).
        case follow(TransportRequest)
        /// A challenge to answer with these schemes once the exchange ends (its body is dropped).
        case answerChallenge([String])
        /// A `429`/`503` whose `Retry-After` is honoured: send again that many nanoseconds after its end.
        case retryAfter(UInt64)
    }

    /// One exchange of the send: its request, its head and what its response is for.
    struct Exchange: Sendable {
        var id: Int
        var request: TransportRequest
        var head: TransportResponseHead?
        var settled: Settled?
        /// Body bytes of the settled answer (decoded when the transport decodes).
        var answerBytes: UInt64 = 0
    }

    /// Whether `head` is a redirect this send follows (or refuses).
    func isRedirect(_ head: TransportResponseHead) -> Bool {
        configuration.redirectPolicy != nil
            && RedirectPolicy.isRedirect(statusCode: head.statusCode, hasLocation: head.header("Location") != nil)
    }
}
