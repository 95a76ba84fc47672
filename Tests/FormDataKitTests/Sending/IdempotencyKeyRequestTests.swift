@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// The `Idempotency-Key` a ``FormDataRequest`` puts into its request head, and that every copy
/// of the request the send state machine makes keeps it.
@Suite("Idempotency-Key on FormDataRequest")
struct IdempotencyKeyRequestTests {
    static let url = URL(string: "http://example.test/upload")!

    static func head(_ request: FormDataRequest) throws -> TransportRequest {
        try request.makeTransportRequest().0
    }

    @Test("asked for: one key made at the first send, the same on the next send and on a copy; none by default")
    func madeOnce() throws {
        let request = FormDataRequest(url: Self.url)
        request.setPostValue("x", forKey: "a")
        #expect(try Self.head(request).header("Idempotency-Key") == nil)
        request.shouldSendIdempotencyKey = true
        let first = try #require(try Self.head(request).header("Idempotency-Key"))
        #expect(first.count == 38 && first.hasPrefix("\"") && first.hasSuffix("\""))
        #expect(try Self.head(request).header("Idempotency-Key") == first)
        #expect(request.idempotencyKey == first)
        #expect(try Self.head(request.copy()).header("Idempotency-Key") == first)
        let fresh = request.copy()
        fresh.idempotencyKey = nil
        #expect(try Self.head(fresh).header("Idempotency-Key") != first)
    }

    @Test("a caller's key goes out quoted; a bad one fails before anything is sent, naming the header")
    func callersKey() throws {
        let request = FormDataRequest(url: Self.url)
        request.idempotencyKey = "order-42"
        #expect(try Self.head(request).header("Idempotency-Key") == "\"order-42\"")
        request.idempotencyKey = "order\r\nX-Injected: 1"
        #expect(throws: FormDataError.invalidRequestHeader(name: "Idempotency-Key", value: "order\r\nX-Injected: 1")) {
            try Self.head(request)
        }
        // A header set by hand is the caller's: sent as it is (and checked by the driver).
        let manual = FormDataRequest(url: Self.url)
        manual.shouldSendIdempotencyKey = true
        manual.addRequestHeader("Idempotency-Key", value: "abc")
        #expect(try Self.head(manual).headers.filter { $0.name.lowercased() == "idempotency-key" }.map(\.value) == ["abc"])
    }

    @Test("the key stays on a 307 re-send and a challenge re-send; a timeout after them is not retried (a response began)")
    func keptOnEveryCopy() throws {
        var request = TransportRequest(
            url: Self.url, method: "POST", headers: [(name: "Idempotency-Key", value: "\"k\"")], body: .data(Data("ab".utf8)),
            timeoutInterval: 0)
        request.network.credentials = .init(user: "u", password: "p")
        var machine = SendStateMachine(
            request: request,
            configuration: .init(retriesOnTimeout: 1, answersChallenges: true, retryPolicy: RetryPolicy(backoff: .none)))
        var sent: [TransportRequest] = []
        func record(_ actions: [SendStateMachine.Action]) {
            for case .startExchange(_, let next) in actions { sent.append(next) }
        }
        record(machine.handle(.start(now: 0)))
        let redirect = TransportResponseHead(statusCode: 307, headers: ["Location": "/other"])
        _ = machine.handle(.responseHead(id: 1, head: redirect, now: 1))
        record(machine.handle(.exchangeEnded(id: 1, error: nil, now: 2)))
        let challenge = TransportResponseHead(statusCode: 401, headers: ["WWW-Authenticate": "Digest realm=\"r\", nonce=\"n\""])
        _ = machine.handle(.responseHead(id: 2, head: challenge, now: 3))
        record(machine.handle(.exchangeEnded(id: 2, error: nil, now: 4)))
        let timeout = FormDataError.timedOut(underlying: UnderlyingError(domain: "libcurl", code: 28, message: "t"))
        #expect(machine.handle(.exchangeEnded(id: 3, error: timeout, now: 5)) == [.finish(.failure(timeout))])
        #expect(sent.count == 3)
        #expect(sent.allSatisfy { $0.header("Idempotency-Key") == "\"k\"" })
    }
}
