import FormDataKitBody
import FormDataKitWire
import Foundation

/// A send's retries so far and the rules for the next one, as the send state machine keeps
/// them: without a ``RetryPolicy`` ASIHTTPRequest's rule (a timeout is sent again at once while
/// `numberOfTimesToRetryOnTimeout` allows), with one the policy's rules.
struct RetryBudget: Sendable {
    /// How many times the send was started again.
    private(set) var retries = 0
    private let policy: RetryPolicy?
    private let retriesOnTimeout: Int
    private var random: SeededRandomNumberGenerator
    private let wallClock: @Sendable () -> Date

    /// A budget for a send with `configuration`; `wallClock` is read only for a `Retry-After`
    /// date on a response without `Date`.
    init(_ configuration: SendStateMachine.Configuration, wallClock: @escaping @Sendable () -> Date) {
        policy = configuration.retryPolicy
        retriesOnTimeout = configuration.retriesOnTimeout
        random = SeededRandomNumberGenerator(seed: configuration.randomSeed)
        self.wallClock = wallClock
    }

    /// The nanoseconds to wait before sending `request` again after its attempt failed with
    /// `error` (`answered`: how far its response got, nil when none arrived), or nil when it is
    /// not sent again.
    mutating func wait(after error: FormDataError, answered: RetryPolicy.AttemptPhase?, request: TransportRequest) -> UInt64? {
        guard let policy else {
            guard case .timedOut = error, retries < retriesOnTimeout else { return nil }
            return 0
        }
        let phase = answered ?? (RetryPolicy.nothingSent(error) ? .notSent : .sent)
        let seconds = policy.delay(
            afterFailure: error, phase: phase, method: request.method,
            carriesIdempotencyKey: request.header(IdempotencyKey.headerName) != nil, retriesSoFar: retries, using: &random)
        return seconds.map(SendStateMachine.Configuration.nanoseconds(fromSeconds:))
    }

    /// The nanoseconds a `429`/`503` response asks to wait before sending again, when the policy
    /// honours its `Retry-After`; nil when the response is the answer.
    func wait(afterResponse head: TransportResponseHead) -> UInt64? {
        guard let policy, policy.honoursRetryAfter else { return nil }
        return policy.delay(afterResponse: head, retriesSoFar: retries, now: wallClock())
            .map(SendStateMachine.Configuration.nanoseconds(fromSeconds:))
    }

    /// Counts a retry; returns the count.
    mutating func count() -> Int {
        retries += 1
        return retries
    }
}

extension SendStateMachine.Configuration {
    /// The error of a send that took longer than ``totalTimeoutNanoseconds``.
    var totalTimeoutError: FormDataError {
        let seconds = Double(totalTimeoutNanoseconds) / 1e9
        return .timedOut(
            underlying: UnderlyingError(
                domain: "FormDataKit", code: 1, message: "The send took longer than its total timeout of \(seconds) s"))
    }
}
