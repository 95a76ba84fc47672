import FormDataKitBody
import FormDataKitWire
import Foundation

/// When a failed send is sent again, and how long it waits first — a rule that never posts twice.
///
/// The rules, in order:
/// - A send that failed before it was connected (nothing reached the server: the host was not
///   found, the connection was refused) is always safe to send again.
/// - Once the connection was made the request may have reached the server — its head, part of
///   its body or all of it — so it is sent again only when that is safe: its method is idempotent
///   (``idempotentMethods``: GET, HEAD, PUT, DELETE, OPTIONS, TRACE, as RFC 9110 §9.2.2 lists
///   them) or it carries an `Idempotency-Key` header (``IdempotencyKey``), which lets a server
///   that supports it process the request once whatever the number of copies.
/// - Once the answer's head arrived but none of its body (lost on the way), only a request with
///   an `Idempotency-Key`: the server answers the repeat from its record.
/// - Never once the answer's body began arriving, or a redirect or an authentication challenge
///   was answered: the server has answered, and its answer is the result.
/// - A `429 Too Many Requests` or `503 Service Unavailable` carrying `Retry-After` is sent again
///   after the time it asks for (delta-seconds or an HTTP-date, at most ``maximumRetryAfter``) when
///   ``honoursRetryAfter`` is set; these statuses say the request was not processed, so this holds
///   for every method.
/// - Only timeouts and connection failures are retried (never a cancel, a refused redirect, an
///   authentication failure or a file error), at most ``maximumRetries`` times, each after an
///   exponential backoff with jitter (``Backoff``).
///
/// Without a policy (the default) `FormDataRequest.numberOfTimesToRetryOnTimeout` keeps
/// ASIHTTPRequest's meaning: every timeout is sent again at once, whatever the method and however
/// far the body got — which can process a POST twice. With a policy the policy decides every
/// retry and that count is not used.
public struct RetryPolicy: Sendable, Equatable {
    /// The methods RFC 9110 calls idempotent: sending one of them twice has the effect of once.
    public static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]
    /// The statuses whose `Retry-After` is honoured when ``honoursRetryAfter`` is set.
    public static let retryAfterStatusCodes: Set<Int> = [429, 503]

    /// How many times a send may be sent again, every reason counted; 3 by default.
    public var maximumRetries: Int
    /// The wait before each retry after a failure.
    public var backoff: Backoff
    /// Whether a `429` or `503` with `Retry-After` is sent again after the time it asks for;
    /// false by default (the response is then the answer, as without a policy).
    public var honoursRetryAfter: Bool
    /// The longest `Retry-After` wait honoured, in seconds: a longer one is cut to it; 60 by default.
    public var maximumRetryAfter: TimeInterval

    /// A policy; every argument is described on its property.
    /// - Parameters:
    ///   - maximumRetries: retries allowed, every reason counted (negative: 0).
    ///   - backoff: the wait before a retry after a failure.
    ///   - honoursRetryAfter: whether `429`/`503` with `Retry-After` is retried after the asked time.
    ///   - maximumRetryAfter: the longest `Retry-After` wait honoured, in seconds.
    public init(
        maximumRetries: Int = 3, backoff: Backoff = Backoff(), honoursRetryAfter: Bool = false, maximumRetryAfter: TimeInterval = 60
    ) {
        self.maximumRetries = max(0, maximumRetries)
        self.backoff = backoff
        self.honoursRetryAfter = honoursRetryAfter
        self.maximumRetryAfter = maximumRetryAfter.isNaN ? 0 : max(0, maximumRetryAfter)
    }

    /// Exponential backoff with jitter: before retry `n` (1 for the first) the wait is
    /// `min(maximumDelay, initialDelay × multiplier^(n-1))` scaled by a random factor in
    /// `[1 - jitter, 1]`.
    public struct Backoff: Sendable, Equatable {
        /// The wait before the first retry, before jitter, in seconds; 0.5 by default.
        public var initialDelay: TimeInterval
        /// How much each wait grows over the one before; 2 by default.
        public var multiplier: Double
        /// The longest wait, before jitter, in seconds; 30 by default.
        public var maximumDelay: TimeInterval
        /// The share of each wait that is random, 0 (none) to 1 (anything from 0 to the wait);
        /// 0.5 by default, so a wait is between half and all of its exponential value.
        public var jitter: Double

        /// A backoff; every argument is described on its property (negative or not-a-number
        /// values become 0, `multiplier` at least 1, `jitter` at most 1).
        /// - Parameters:
        ///   - initialDelay: the first wait in seconds.
        ///   - multiplier: the growth from one wait to the next.
        ///   - maximumDelay: the longest wait in seconds.
        ///   - jitter: the random share of a wait, 0 to 1.
        public init(initialDelay: TimeInterval = 0.5, multiplier: Double = 2, maximumDelay: TimeInterval = 30, jitter: Double = 0.5) {
            self.initialDelay = Self.clean(initialDelay)
            self.multiplier = max(1, Self.clean(multiplier))
            self.maximumDelay = Self.clean(maximumDelay)
            self.jitter = min(1, Self.clean(jitter))
        }

        /// No wait at all between retries.
        public static let none = Backoff(initialDelay: 0, jitter: 0)

        /// The wait before retry `retry`, in seconds, its jitter drawn from `generator`.
        /// - Parameters:
        ///   - retry: the retry's number, 1 for the first (smaller values count as 1).
        ///   - generator: the source of the random factor (a seeded one in tests).
        /// - Returns: a wait in `[(1 - jitter) × w, w]`, where `w` is the exponential wait.
        public func delay(beforeRetry retry: Int, using generator: inout some RandomNumberGenerator) -> TimeInterval {
            let exponent = Double(max(1, retry) - 1)
            let full = min(maximumDelay, initialDelay * pow(multiplier, min(exponent, 1024)))
            guard full > 0, jitter > 0 else { return full }
            let factor = 1 - jitter + jitter * Double.random(in: 0...1, using: &generator)
            return full * factor
        }

        private static func clean(_ value: Double) -> Double { value.isNaN ? 0 : max(0, value) }
    }

    /// How far an attempt got before it failed.
    enum AttemptPhase: Sendable, Equatable {
        /// It was never connected: nothing reached the server.
        case notSent
        /// It was connected: its head and some or all of its body may have reached the server.
        case sent
        /// The response's head arrived, and none of its body: a request carrying an
        /// `Idempotency-Key` may be sent again (the server answers a repeat from its record).
        case headReceived
        /// A response began: some of its body arrived, or a redirect or challenge was answered.
        case responseBegun
    }

    /// Whether a request with `method` and, when `carriesIdempotencyKey`, an `Idempotency-Key`
    /// may be sent again after it reached the server.
    /// - Parameters:
    ///   - method: the request's method (compared in upper case).
    ///   - carriesIdempotencyKey: whether it has an `Idempotency-Key` header.
    /// - Returns: true for an idempotent method or a request with a key.
    public static func isSafeToRepeat(method: String, carriesIdempotencyKey: Bool) -> Bool {
        carriesIdempotencyKey || idempotentMethods.contains(method.uppercased())
    }

    /// The wait in seconds before sending again after attempt number `retriesSoFar + 1` failed
    /// with `error` in `phase`, or nil when it must not be sent again.
    func delay(
        afterFailure error: FormDataError, phase: AttemptPhase, method: String, carriesIdempotencyKey: Bool, retriesSoFar: Int,
        using generator: inout some RandomNumberGenerator
    ) -> TimeInterval? {
        guard retriesSoFar < maximumRetries, Self.isRetryable(error) else { return nil }
        switch phase {
        case .responseBegun: return nil
        case .headReceived: guard carriesIdempotencyKey else { return nil }
        case .sent: guard Self.isSafeToRepeat(method: method, carriesIdempotencyKey: carriesIdempotencyKey) else { return nil }
        case .notSent: break
        }
        return backoff.delay(beforeRetry: retriesSoFar + 1, using: &generator)
    }

    /// The wait in seconds a `429`/`503` response asks for with its `Retry-After`, when it is
    /// honoured and retries are left; nil when the response is the answer.
    func delay(afterResponse head: TransportResponseHead, retriesSoFar: Int, now: Date) -> TimeInterval? {
        guard honoursRetryAfter, retriesSoFar < maximumRetries, Self.retryAfterStatusCodes.contains(head.statusCode),
            let value = head.header("Retry-After")
        else { return nil }
        // An HTTP-date is measured from the response's own Date when it has one (the server's
        // clock on both sides), else from ours.
        let reference = head.header("Date").flatMap(HTTPDate.parse) ?? now
        guard let wait = Self.retryAfterSeconds(value, now: reference) else { return nil }
        return min(wait, maximumRetryAfter)
    }

    /// The seconds a `Retry-After` value asks to wait: delta-seconds, or an HTTP-date (IMF-fixdate)
    /// less `now` (0 when it is past); nil when the value is neither.
    /// - Parameters:
    ///   - value: the header's value.
    ///   - now: the time an HTTP-date is measured from.
    /// - Returns: the wait in seconds, or nil.
    public static func retryAfterSeconds(_ value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return TimeInterval(trimmed) ?? .greatestFiniteMagnitude
        }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// Whether a failure is of a kind worth sending again: a timeout or a connection failure.
    static func isRetryable(_ error: FormDataError) -> Bool {
        switch error {
        case .timedOut, .connectionFailure: return true
        default: return false
        }
    }

    /// Whether `error` says the connection was never made, so nothing was sent: libcurl's
    /// resolve and connect failures (5, 6, 7), URLSession's cannot-find-host, DNS and
    /// cannot-connect errors (-1003, -1006, -1004), and a refused connection (`ECONNREFUSED`).
    static func nothingSent(_ error: FormDataError) -> Bool {
        guard case .connectionFailure(let underlying) = error else { return false }
        switch underlying.domain {
        case "libcurl": return [5, 6, 7].contains(underlying.code)
        case "NSURLErrorDomain": return [-1003, -1004, -1006].contains(underlying.code)
        case "NSPOSIXErrorDomain": return underlying.code == Int(ECONNREFUSED)
        default: return false
        }
    }
}
