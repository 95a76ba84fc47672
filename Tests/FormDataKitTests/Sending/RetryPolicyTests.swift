@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// The retry policy as a pure value: which failures are sent again, the backoff's bounds, the
/// `Retry-After` forms, the `Idempotency-Key` values.
@Suite("RetryPolicy")
struct RetryPolicyTests {
    static let timeout = FormDataError.timedOut(underlying: UnderlyingError(domain: "FormDataKit", code: 0, message: "idle"))
    static let dropped = FormDataError.connectionFailure(underlying: UnderlyingError(domain: "libcurl", code: 52, message: "empty reply"))
    static let refused = FormDataError.connectionFailure(underlying: UnderlyingError(domain: "libcurl", code: 7, message: "refused"))

    static func delay(
        _ error: FormDataError, phase: RetryPolicy.AttemptPhase, policy: RetryPolicy = RetryPolicy(backoff: .none),
        method: String = "POST", key: Bool = false, retries: Int = 0
    ) -> TimeInterval? {
        var generator = SeededRandomNumberGenerator(seed: 1)
        return policy.delay(
            afterFailure: error, phase: phase, method: method, carriesIdempotencyKey: key, retriesSoFar: retries, using: &generator)
    }

    @Test("a failed connect is retried whatever the method; a POST after the connection only with a key")
    func safety() {
        #expect(Self.delay(Self.refused, phase: .notSent) == 0)
        #expect(Self.delay(Self.dropped, phase: .sent) == nil)
        #expect(Self.delay(Self.timeout, phase: .sent) == nil)
        #expect(Self.delay(Self.dropped, phase: .sent, key: true) == 0)
        #expect(Self.delay(Self.timeout, phase: .sent, key: true) == 0)
        for method in ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "put"] {
            #expect(Self.delay(Self.dropped, phase: .sent, method: method) == 0, "\(method)")
        }
        #expect(Self.delay(Self.dropped, phase: .sent, method: "PATCH") == nil)
    }

    @Test("after the head without body: only with a key, whatever the method")
    func headReceived() {
        #expect(Self.delay(Self.timeout, phase: .headReceived, key: true) == 0)
        #expect(Self.delay(Self.dropped, phase: .headReceived, method: "PATCH", key: true) == 0)
        #expect(Self.delay(Self.timeout, phase: .headReceived) == nil)
        #expect(Self.delay(Self.timeout, phase: .headReceived, method: "GET") == nil)
        #expect(Self.delay(Self.timeout, phase: .headReceived, key: true, retries: 3) == nil)
    }

    @Test("never once a response began, never past the limit, never for other errors")
    func never() {
        #expect(Self.delay(Self.dropped, phase: .responseBegun, method: "GET", key: true) == nil)
        #expect(Self.delay(Self.refused, phase: .notSent, retries: 3) == nil)
        #expect(Self.delay(Self.refused, phase: .notSent, policy: RetryPolicy(maximumRetries: 0)) == nil)
        #expect(Self.delay(.cancelled, phase: .notSent) == nil)
        #expect(Self.delay(.responseTooLarge(limit: 1), phase: .sent, method: "GET") == nil)
    }

    @Test("which errors say nothing was sent")
    func nothingSent() {
        #expect(RetryPolicy.nothingSent(Self.refused))
        #expect(RetryPolicy.nothingSent(.connectionFailure(underlying: UnderlyingError(domain: "libcurl", code: 6, message: "dns"))))
        #expect(
            RetryPolicy.nothingSent(.connectionFailure(underlying: UnderlyingError(domain: "NSURLErrorDomain", code: -1004, message: ""))))
        #expect(!RetryPolicy.nothingSent(Self.dropped))
        #expect(
            !RetryPolicy.nothingSent(.connectionFailure(underlying: UnderlyingError(domain: "NSURLErrorDomain", code: -1005, message: ""))))
        #expect(!RetryPolicy.nothingSent(Self.timeout))
    }

    @Test("exponential backoff: each wait within [(1 - jitter) × w, w], w = min(cap, base × 2^(n-1))")
    func backoffBounds() {
        let backoff = RetryPolicy.Backoff(initialDelay: 0.5, multiplier: 2, maximumDelay: 4, jitter: 0.5)
        var generator = SeededRandomNumberGenerator(seed: 42)
        for retry in 1...8 {
            let full = min(4, 0.5 * pow(2, Double(retry - 1)))
            var seen: [TimeInterval] = []
            for _ in 0..<500 {
                let wait = backoff.delay(beforeRetry: retry, using: &generator)
                #expect(wait >= full * 0.5 && wait <= full, "retry \(retry): \(wait)")
                seen.append(wait)
            }
            // The jitter spreads the waits over most of their range.
            #expect((seen.max() ?? 0) - (seen.min() ?? 0) > full * 0.4)
        }
        let fixed = RetryPolicy.Backoff(initialDelay: 1, maximumDelay: 100, jitter: 0)
        #expect((1...4).map { fixed.delay(beforeRetry: $0, using: &generator) } == [1, 2, 4, 8])
        #expect(RetryPolicy.Backoff(jitter: 7).jitter == 1)
        #expect(RetryPolicy.Backoff(initialDelay: .nan, multiplier: 0.1).delay(beforeRetry: 9, using: &generator) == 0)
        #expect(RetryPolicy.Backoff(initialDelay: 1, maximumDelay: 30, jitter: 0).delay(beforeRetry: 5000, using: &generator) == 30)
    }

    @Test("the same seed, the same waits: the jitter source is injectable")
    func seeded() {
        let backoff = RetryPolicy.Backoff()
        var first = SeededRandomNumberGenerator(seed: 7)
        var second = SeededRandomNumberGenerator(seed: 7)
        #expect(
            (1...5).map { backoff.delay(beforeRetry: $0, using: &first) } == (1...5).map { backoff.delay(beforeRetry: $0, using: &second) })
    }

    @Test("Retry-After: delta-seconds, an IMF-fixdate measured from the response's Date, capped; nothing else")
    func retryAfter() throws {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == now)
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:60 GMT") == Date(timeIntervalSince1970: 1_709_251_200))
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
        #expect(RetryPolicy.retryAfterSeconds("120", now: now) == 120)
        #expect(RetryPolicy.retryAfterSeconds(" 0 ", now: now) == 0)
        #expect(RetryPolicy.retryAfterSeconds("Sun, 06 Nov 1994 08:49:39 GMT", now: now) == 2)
        #expect(RetryPolicy.retryAfterSeconds("Sun, 06 Nov 1994 08:49:30 GMT", now: now) == 0)
        #expect(RetryPolicy.retryAfterSeconds("-1", now: now) == nil)
        #expect(RetryPolicy.retryAfterSeconds("1.5", now: now) == nil)
        #expect(RetryPolicy.retryAfterSeconds("soon", now: now) == nil)

        let policy = RetryPolicy(honoursRetryAfter: true, maximumRetryAfter: 10)
        func head(_ status: Int, _ headers: [String: String]) -> TransportResponseHead {
            TransportResponseHead(statusCode: status, headers: headers)
        }
        #expect(policy.delay(afterResponse: head(429, ["Retry-After": "1"]), retriesSoFar: 0, now: now) == 1)
        #expect(policy.delay(afterResponse: head(503, ["Retry-After": "3600"]), retriesSoFar: 0, now: now) == 10)
        let dated = head(503, ["Retry-After": "Sun, 06 Nov 1994 08:49:39 GMT", "Date": "Sun, 06 Nov 1994 08:49:37 GMT"])
        #expect(policy.delay(afterResponse: dated, retriesSoFar: 0, now: .distantFuture) == 2)
        #expect(policy.delay(afterResponse: head(500, ["Retry-After": "1"]), retriesSoFar: 0, now: now) == nil)
        #expect(policy.delay(afterResponse: head(429, [:]), retriesSoFar: 0, now: now) == nil)
        #expect(policy.delay(afterResponse: head(429, ["Retry-After": "1"]), retriesSoFar: 3, now: now) == nil)
        #expect(RetryPolicy().delay(afterResponse: head(429, ["Retry-After": "1"]), retriesSoFar: 0, now: now) == nil)
    }

    @Test("Idempotency-Key values: a made key is a quoted version-4 UUID, fresh each time; a caller's key is quoted and checked")
    func idempotencyKeys() throws {
        let key = IdempotencyKey.make()
        let pattern = #/"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"/#
        #expect(try pattern.wholeMatch(in: key) != nil, "\(key)")
        #expect(Set((0..<100).map { _ in IdempotencyKey.make() }).count == 100)
        #expect(try IdempotencyKey.headerValue(for: "order-42") == "\"order-42\"")
        #expect(try IdempotencyKey.headerValue(for: #"a"b\c"#) == #""a\"b\\c""#)
        #expect(try IdempotencyKey.headerValue(for: key) == key)
        #expect(throws: FormDataError.invalidRequestHeader(name: "Idempotency-Key", value: "")) { try IdempotencyKey.headerValue(for: "") }
        #expect(throws: FormDataError.invalidRequestHeader(name: "Idempotency-Key", value: "a\r\nX: y")) {
            try IdempotencyKey.headerValue(for: "a\r\nX: y")
        }
        #expect(throws: FormDataError.invalidRequestHeader(name: "Idempotency-Key", value: "\"a\"b\"")) {
            try IdempotencyKey.headerValue(for: "\"a\"b\"")
        }
    }
}
