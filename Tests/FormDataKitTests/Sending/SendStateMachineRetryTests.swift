@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// The send state machine under a ``RetryPolicy``, and ASIHTTPRequest's rule without one: events
/// in, actions out — no sockets, no clock.
@Suite("SendStateMachine retries")
struct SendStateMachineRetryTests {
    typealias Machine = SendStateMachine
    static let url = URL(string: "http://example.test/upload")!
    static let second: UInt64 = 1_000_000_000
    static let dropped = FormDataError.connectionFailure(underlying: UnderlyingError(domain: "libcurl", code: 52, message: "empty reply"))
    static let refused = FormDataError.connectionFailure(underlying: UnderlyingError(domain: "libcurl", code: 7, message: "refused"))

    static func request(method: String = "POST", key: String? = nil) -> TransportRequest {
        var headers: [(name: String, value: String)] = [(name: "Content-Type", value: "text/plain")]
        if let key { headers.append((name: "Idempotency-Key", value: key)) }
        return TransportRequest(
            url: url, method: method, headers: headers, body: .data(Data(repeating: 0x61, count: 10)), timeoutInterval: 0)
    }

    static func machine(
        _ request: TransportRequest = request(), policy: RetryPolicy? = RetryPolicy(backoff: .none), retriesOnTimeout: Int = 0,
        timeout: UInt64 = 0, total: UInt64 = 0
    ) -> Machine {
        Machine(
            request: request,
            configuration: .init(
                retriesOnTimeout: retriesOnTimeout, idleTimeoutNanoseconds: timeout, totalTimeoutNanoseconds: total, retryPolicy: policy,
                randomSeed: 9),
            wallClock: { Date(timeIntervalSince1970: 0) })
    }

    static func started(_ actions: [Machine.Action]) -> (id: Int, request: TransportRequest)? {
        for case .startExchange(let id, let request) in actions { return (id, request) }
        return nil
    }

    @Test("a POST without a key whose body went out and whose connection dropped is not sent again: the error is the send's")
    func postNotRepeated() {
        var machine = Self.machine()
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
        #expect(machine.handle(.exchangeEnded(id: 1, error: Self.dropped, now: 2)) == [.finish(.failure(Self.dropped))])
        #expect(machine.retryCount == 0)
    }

    @Test("the same POST is sent again after a failed connect, and after a drop when it carries a key (the same key)")
    func postRepeatedWhenSafe() {
        var refused = Self.machine()
        _ = refused.handle(.start(now: 0))
        #expect(
            refused.handle(.exchangeEnded(id: 1, error: Self.refused, now: 1)) == [
                .reportRetry(retryCount: 1), .startExchange(id: 2, request: Self.request()),
            ])
        let keyed = Self.request(key: "\"k-1\"")
        var machine = Self.machine(keyed)
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
        let actions = machine.handle(.exchangeEnded(id: 1, error: Self.dropped, now: 2))
        #expect(Self.started(actions)?.request.header("Idempotency-Key") == "\"k-1\"")
        #expect(actions.first == .reportProgress(delta: -9))
        var put = Self.machine(Self.request(method: "PUT"))
        _ = put.handle(.start(now: 0))
        #expect(Self.started(put.handle(.exchangeEnded(id: 1, error: Self.dropped, now: 1)))?.id == 2)
    }

    @Test("an idle timeout under the policy: a keyed POST is retried, a plain POST is not")
    func idleTimeout() {
        var plain = Self.machine(timeout: Self.second)
        _ = plain.handle(.start(now: 0))
        let actions = plain.handle(.clock(now: Self.second))
        guard case .finish(.failure(.timedOut))? = actions.last else {
            Issue.record("not a timeout: \(actions)")
            return
        }
        var keyed = Self.machine(Self.request(key: "\"k\""), timeout: Self.second)
        _ = keyed.handle(.start(now: 0))
        #expect(Self.started(keyed.handle(.clock(now: Self.second)))?.id == 2)
    }

    @Test("without a policy ASIHTTPRequest's count keeps its meaning: a timed-out POST is sent again at once")
    func legacy() {
        var machine = Self.machine(policy: nil, retriesOnTimeout: 1, timeout: Self.second)
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
        #expect(Self.started(machine.handle(.clock(now: Self.second + 1)))?.id == 2)
        // …and a dropped connection is not retried at all.
        var dropped = Self.machine(policy: nil, retriesOnTimeout: 5)
        _ = dropped.handle(.start(now: 0))
        #expect(dropped.handle(.exchangeEnded(id: 1, error: Self.dropped, now: 1)) == [.finish(.failure(Self.dropped))])
    }

    @Test("a keyed request whose head arrived but none of its body (lost in a black hole) is sent again; a request without a key is not")
    func afterHeadWithoutBody() {
        let head = TransportResponseHead(statusCode: 200, headers: ["Content-Length": "2"])
        for (method, key) in [("POST", "\"k\"" as String?), ("POST", nil), ("GET", nil)] {
            var machine = Self.machine(Self.request(method: method, key: key), timeout: Self.second)
            _ = machine.handle(.start(now: 0))
            _ = machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
            #expect(machine.handle(.responseHead(id: 1, head: head, now: 2)).contains(.reportResponseHead(head)))
            let actions = machine.handle(.clock(now: 2 + Self.second))
            if key != nil {
                #expect(actions.contains(.reportRetry(retryCount: 1)), "\(actions)")
                #expect(Self.started(actions)?.id == 2)
            } else {
                guard case .finish(.failure(.timedOut))? = actions.last else {
                    Issue.record("\(method) without a key: \(actions)")
                    continue
                }
            }
        }
    }

    @Test("never once the answer's body began: a drop after the head and some body, even for GET with a key")
    func afterResponseHead() {
        var machine = Self.machine(Self.request(method: "GET", key: "\"k\""))
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: TransportResponseHead(statusCode: 200, headers: [:]), now: 1))
        _ = machine.handle(.bodyReceived(id: 1, count: 3, now: 2))
        #expect(machine.handle(.exchangeEnded(id: 1, error: Self.dropped, now: 3)).last == .finish(.failure(Self.dropped)))
    }

    @Test("backoff: the retry waits on the clock, then starts; a cancel while waiting ends the send")
    func backoffWait() {
        let policy = RetryPolicy(backoff: .init(initialDelay: 2, jitter: 0))
        var machine = Self.machine(policy: policy)
        _ = machine.handle(.start(now: 0))
        #expect(
            machine.handle(.exchangeEnded(id: 1, error: Self.refused, now: Self.second)) == [
                .reportRetry(retryCount: 1), .armTimer(deadline: 3 * Self.second),
            ])
        #expect(machine.handle(.clock(now: 2 * Self.second)) == [.armTimer(deadline: 3 * Self.second)])
        #expect(Self.started(machine.handle(.clock(now: 3 * Self.second)))?.id == 2)
        _ = machine.handle(.exchangeEnded(id: 2, error: Self.refused, now: 4 * Self.second))
        #expect(machine.handle(.cancel) == [.finish(.failure(.cancelled))])
        #expect(machine.handle(.clock(now: 9 * Self.second)) == [])
    }

    @Test("the total timeout ends a wait that would outlast it")
    func totalDuringWait() {
        let policy = RetryPolicy(backoff: .init(initialDelay: 10, jitter: 0))
        var machine = Self.machine(policy: policy, total: 5 * Self.second)
        _ = machine.handle(.start(now: 0))
        #expect(machine.handle(.exchangeEnded(id: 1, error: Self.refused, now: Self.second)).last == .armTimer(deadline: 5 * Self.second))
        guard case .finish(.failure(.timedOut))? = machine.handle(.clock(now: 5 * Self.second)).last else {
            Issue.record("no total timeout")
            return
        }
    }

    @Test("429 with Retry-After, honoured: its body dropped, the same POST sent again after the wait; not without the setting")
    func retryAfter() {
        let head = TransportResponseHead(statusCode: 429, headers: ["Retry-After": "1"])
        var machine = Self.machine(policy: RetryPolicy(honoursRetryAfter: true))
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
        _ = machine.handle(.responseHead(id: 1, head: head, now: 2))
        #expect(machine.handle(.bodyReceived(id: 1, count: 4, now: 3)) == [])
        let actions = machine.handle(.exchangeEnded(id: 1, error: nil, now: 4))
        #expect(actions == [.reportProgress(delta: -10), .reportRetry(retryCount: 1), .armTimer(deadline: 4 + Self.second)])
        #expect(Self.started(machine.handle(.clock(now: 4 + Self.second)))?.request == Self.request())

        var plain = Self.machine()
        _ = plain.handle(.start(now: 0))
        #expect(plain.handle(.responseHead(id: 1, head: head, now: 2)) == [.reportResponseHead(head)])
        #expect(plain.handle(.bodyReceived(id: 1, count: 4, now: 3)) == [.keepResponseBody])
    }
}
