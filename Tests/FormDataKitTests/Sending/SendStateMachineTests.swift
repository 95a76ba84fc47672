@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// The send state machine, transition by transition: no sockets, no threads, no clock.
@Suite("SendStateMachine")
struct SendStateMachineTests {
    typealias Machine = SendStateMachine
    static let url = URL(string: "http://example.test/upload")!
    static let second: UInt64 = 1_000_000_000

    static func request(
        body: Int = 10, method: String = "POST", url: URL = url, credentials: Bool = false
    ) -> TransportRequest {
        var request = TransportRequest(
            url: url, method: method, headers: [(name: "Content-Type", value: "text/plain"), (name: "Authorization", value: "x")],
            body: body == 0 ? .none : .data(Data(repeating: 0x61, count: body)), timeoutInterval: 10)
        if credentials { request.network.credentials = .init(user: "u", password: "p") }
        return request
    }

    static func head(_ status: Int, _ headers: [String: String] = [:]) -> TransportResponseHead {
        TransportResponseHead(statusCode: status, headers: headers)
    }

    static func machine(
        _ request: TransportRequest = request(), retries: Int = 0, policy: RedirectPolicy? = RedirectPolicy(), challenges: Bool = false,
        decodes: Bool = true, timeout: UInt64 = 0
    ) -> Machine {
        Machine(
            request: request,
            configuration: .init(
                retriesOnTimeout: retries, redirectPolicy: policy, answersChallenges: challenges, transportDecodesContentEncoding: decodes,
                idleTimeoutNanoseconds: timeout))
    }

    /// The request of the single `startExchange` among `actions`.
    static func started(_ actions: [Machine.Action]) -> (id: Int, request: TransportRequest)? {
        for case .startExchange(let id, let request) in actions { return (id, request) }
        return nil
    }

    static func finished(_ actions: [Machine.Action]) -> Machine.Outcome? {
        for case .finish(let outcome) in actions { return outcome }
        return nil
    }

    @Test("a whole send: start, progress held back until the head, the head, the body kept, finished at exactly the length")
    func wholeSend() {
        var machine = Self.machine()
        #expect(machine.handle(.start(now: 0)) == [.startExchange(id: 1, request: Self.request())])
        #expect(machine.handle(.bodySent(id: 1, totalBytesSent: 4, now: 1)) == [.reportProgress(delta: 4)])
        #expect(machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 2)) == [.reportProgress(delta: 5)])
        #expect(machine.handle(.bodySent(id: 1, totalBytesSent: 12, now: 2)) == [])
        #expect(
            machine.handle(.responseHead(id: 1, head: Self.head(200), now: 3)) == [
                .reportProgress(delta: 1), .reportResponseHead(Self.head(200)),
            ])
        #expect(machine.handle(.bodyReceived(id: 1, count: 5, now: 4)) == [.keepResponseBody])
        #expect(machine.handle(.bodyReceived(id: 1, count: 5, now: 4)) == [.keepResponseBody])
        #expect(
            machine.handle(.exchangeEnded(id: 1, error: nil, now: 5))
                == [.finish(.response(Self.head(200), url: Self.url, authentication: AuthenticationOutcome()))])
        #expect(machine.isFinished)
    }

    @Test("bytes the transport never reported are added at the end: increments sum to the body length")
    func progressToppedUp() {
        var machine = Self.machine()
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: Self.head(204), now: 1))
        let actions = machine.handle(.exchangeEnded(id: 1, error: nil, now: 2))
        #expect(actions.contains(.reportProgress(delta: 10)))
        #expect(actions.last == .finish(.response(Self.head(204), url: Self.url, authentication: AuthenticationOutcome())))
        #expect(Self.finished(actions) == .response(Self.head(204), url: Self.url, authentication: AuthenticationOutcome()))
    }

    @Test("cancel before the start: the start finishes cancelled and starts nothing")
    func cancelBeforeStart() {
        var machine = Self.machine()
        #expect(machine.handle(.cancel) == [])
        #expect(machine.handle(.start(now: 0)) == [.finish(.failure(.cancelled))])
        #expect(machine.handle(.cancel) == [])
    }

    @Test("cancel during an exchange stops it and finishes at once; its later events are ignored")
    func cancelDuringExchange() {
        var machine = Self.machine()
        _ = machine.handle(.start(now: 0))
        #expect(machine.handle(.cancel) == [.cancelExchange(id: 1), .finish(.failure(.cancelled))])
        #expect(machine.handle(.exchangeEnded(id: 1, error: .cancelled, now: 1)) == [])
        #expect(machine.handle(.responseHead(id: 1, head: Self.head(200), now: 1)) == [])
        #expect(machine.handle(.cancel) == [])
    }

    @Test("a request refused before it starts finishes with the error, once")
    func refused() {
        var machine = Self.machine()
        let error = FormDataError.invalidRequestHeader(name: "X", value: "\r\n")
        #expect(machine.handle(.refuse(error)) == [.finish(.failure(error))])
        #expect(machine.handle(.start(now: 0)) == [])
    }

    @Test("the idle clock: armed at the start, re-armed from the last activity, times out with nothing left to retry")
    func idleTimeout() {
        var machine = Self.machine(timeout: 2 * Self.second)
        #expect(machine.handle(.start(now: 0)) == [.startExchange(id: 1, request: Self.request()), .armTimer(deadline: 2 * Self.second)])
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 3, now: Self.second))
        #expect(machine.handle(.clock(now: 2 * Self.second)) == [.armTimer(deadline: 3 * Self.second)])
        let actions = machine.handle(.clock(now: 3 * Self.second))
        #expect(actions.first == .cancelExchange(id: 1))
        guard case .failure(.timedOut(let underlying))? = Self.finished(actions) else {
            Issue.record("not a timeout: \(actions)")
            return
        }
        #expect(underlying.message == "No bytes sent or received for 2.0 s")
    }

    @Test("a timeout with retries left: progress taken back, the retry reported, the original request sent again")
    func retryAfterIdleTimeout() {
        var machine = Self.machine(retries: 1, timeout: Self.second)
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 6, now: 10))
        let actions = machine.handle(.clock(now: 2 * Self.second))
        #expect(
            actions == [
                .cancelExchange(id: 1), .reportProgress(delta: -6), .reportRetry(retryCount: 1),
                .startExchange(id: 2, request: Self.request()), .armTimer(deadline: 3 * Self.second),
            ])
        #expect(machine.retryCount == 1)
        // The first exchange's late reports change nothing.
        #expect(machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 2 * Self.second)) == [])
        #expect(machine.handle(.exchangeEnded(id: 1, error: .cancelled, now: 2 * Self.second)) == [])
        _ = machine.handle(.responseHead(id: 2, head: Self.head(200), now: 2 * Self.second))
        let end = machine.handle(.exchangeEnded(id: 2, error: nil, now: 2 * Self.second))
        #expect(end.contains(.reportProgress(delta: 10)))
    }

    @Test("a timeout reported by the transport (connecting) is retried the same way; then the last one is the error")
    func transportTimeoutRetried() {
        let timeout = FormDataError.timedOut(underlying: UnderlyingError(domain: "libcurl", code: 28, message: "connect"))
        var machine = Self.machine(retries: 1)
        _ = machine.handle(.start(now: 0))
        #expect(Self.started(machine.handle(.exchangeEnded(id: 1, error: timeout, now: 1)))?.id == 2)
        #expect(machine.handle(.exchangeEnded(id: 2, error: timeout, now: 2)) == [.finish(.failure(timeout))])
    }

    @Test("any other failure of the exchange is the send's")
    func connectionFailure() {
        let failure = FormDataError.connectionFailure(underlying: UnderlyingError(domain: "libcurl", code: 7, message: "refused"))
        var machine = Self.machine(retries: 3)
        _ = machine.handle(.start(now: 0))
        #expect(machine.handle(.exchangeEnded(id: 1, error: failure, now: 1)) == [.finish(.failure(failure))])
    }

    @Test("an exchange that ends without a head is a connection failure")
    func noResponse() {
        var machine = Self.machine()
        _ = machine.handle(.start(now: 0))
        guard case .failure(.connectionFailure(let underlying))? = Self.finished(machine.handle(.exchangeEnded(id: 1, error: nil, now: 1)))
        else {
            Issue.record("not a connection failure")
            return
        }
        #expect(underlying.message == "The server sent no HTTP response")
    }

    @Test("a 302 is followed as a GET without the body or its headers; its own body is not kept")
    func redirectFollowed() {
        var machine = Self.machine()
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: Self.head(302, ["Location": "/next?a=1"]), now: 1))
        #expect(machine.handle(.bodyReceived(id: 1, count: 20, now: 1)) == [])
        guard let next = Self.started(machine.handle(.exchangeEnded(id: 1, error: nil, now: 2))) else {
            Issue.record("no second exchange")
            return
        }
        #expect(next.id == 2)
        #expect(next.request.url.absoluteString == "http://example.test/next?a=1")
        #expect(next.request.method == "GET")
        #expect(next.request.body == .none)
        #expect(next.request.header("Content-Type") == nil)
        #expect(next.request.header("Authorization") == "x")
        _ = machine.handle(.responseHead(id: 2, head: Self.head(200), now: 3))
        #expect(
            Self.finished(machine.handle(.exchangeEnded(id: 2, error: nil, now: 4)))
                == .response(Self.head(200), url: next.request.url, authentication: AuthenticationOutcome()))
    }

    @Test("a 307 to another origin keeps the method and the body, drops the credentials; progress never goes back")
    func redirect307() {
        var machine = Self.machine()
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
        _ = machine.handle(.responseHead(id: 1, head: Self.head(307, ["Location": "http://other.test/b"]), now: 1))
        let next = Self.started(machine.handle(.exchangeEnded(id: 1, error: nil, now: 2)))
        #expect(next?.request.method == "POST")
        #expect(next?.request.body == Self.request().body)
        #expect(next?.request.header("Authorization") == nil)
        #expect(machine.handle(.bodySent(id: 2, totalBytesSent: 5, now: 3)) == [])
    }

    @Test("more redirects than the policy allows: tooMuchRedirection")
    func tooManyRedirects() {
        var machine = Self.machine(policy: RedirectPolicy(maximumRedirects: 1))
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: Self.head(301, ["Location": "/a"]), now: 1))
        _ = machine.handle(.exchangeEnded(id: 1, error: nil, now: 1))
        let actions = machine.handle(.responseHead(id: 2, head: Self.head(301, ["Location": "/b"]), now: 1))
        guard case .failure(.tooMuchRedirection)? = Self.finished(actions) else {
            Issue.record("not tooMuchRedirection: \(actions)")
            return
        }
    }

    @Test("https to http is refused at the redirect's head, without reading its body")
    func redirectRefused() {
        var machine = Self.machine(Self.request(url: URL(string: "https://example.test/a")!))
        _ = machine.handle(.start(now: 0))
        let actions = machine.handle(.responseHead(id: 1, head: Self.head(302, ["Location": "http://example.test/b"]), now: 1))
        #expect(actions.first == .cancelExchange(id: 1))
        guard case .failure(.redirectRefused(_, let to, _))? = Self.finished(actions) else {
            Issue.record("not refused: \(actions)")
            return
        }
        #expect(to == "http://example.test/b")
    }

    @Test("without a redirect policy the 3xx is the response")
    func redirectNotFollowed() {
        var machine = Self.machine(policy: nil)
        _ = machine.handle(.start(now: 0))
        let head = Self.head(302, ["Location": "/a"])
        #expect(machine.handle(.responseHead(id: 1, head: head, now: 1)) == [.reportResponseHead(head)])
        #expect(machine.handle(.bodyReceived(id: 1, count: 3, now: 1)) == [.keepResponseBody])
    }

    @Test("a 401 offering Digest after pre-emptive Basic is answered by sending again, once; the outcome names Digest")
    func challengeAnswered() {
        var machine = Self.machine(Self.request(credentials: true), challenges: true)
        _ = machine.handle(.start(now: 0))
        let challenge = Self.head(401, ["WWW-Authenticate": "Digest realm=\"files\", nonce=\"n, m\", qop=\"auth\""])
        _ = machine.handle(.responseHead(id: 1, head: challenge, now: 1))
        #expect(machine.handle(.bodyReceived(id: 1, count: 9, now: 1)) == [])
        let next = Self.started(machine.handle(.exchangeEnded(id: 1, error: nil, now: 1)))
        #expect(next?.request.network.challengeSchemes == ["Digest"])
        _ = machine.handle(.responseHead(id: 2, head: Self.head(200), now: 2))
        #expect(
            Self.finished(machine.handle(.exchangeEnded(id: 2, error: nil, now: 3)))
                == .response(
                    Self.head(200), url: Self.url, authentication: AuthenticationOutcome(scheme: "Digest", realm: "files", retryCount: 1)))
    }

    @Test("a second 401 is the answer: authenticationNeeded naming the scheme; a transport that cannot answer does not retry")
    func challengeNotAnsweredTwice() {
        let challenge = Self.head(401, ["WWW-Authenticate": "Digest realm=\"files\""])
        var machine = Self.machine(Self.request(credentials: true), challenges: true)
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: challenge, now: 1))
        _ = machine.handle(.exchangeEnded(id: 1, error: nil, now: 1))
        _ = machine.handle(.responseHead(id: 2, head: challenge, now: 1))
        guard
            case .failure(.authenticationNeeded(let underlying))? = Self.finished(machine.handle(.exchangeEnded(id: 2, error: nil, now: 1)))
        else {
            Issue.record("not authenticationNeeded")
            return
        }
        #expect(underlying.message.contains("Digest"))

        var plain = Self.machine(Self.request(credentials: true), challenges: false)
        _ = plain.handle(.start(now: 0))
        _ = plain.handle(.responseHead(id: 1, head: challenge, now: 1))
        guard case .failure(.authenticationNeeded)? = Self.finished(plain.handle(.exchangeEnded(id: 1, error: nil, now: 1))) else {
            Issue.record("retried without the capability")
            return
        }
    }

    @Test("a transport answering a challenge itself reports two heads: the last one is the response")
    func lastHeadWins() {
        var machine = Self.machine(challenges: true)
        _ = machine.handle(.start(now: 0))
        // The 401 is not reported: a later head may replace it.
        #expect(machine.handle(.responseHead(id: 1, head: Self.head(401, ["WWW-Authenticate": "NTLM"]), now: 1)) == [])
        #expect(machine.handle(.responseHead(id: 1, head: Self.head(200), now: 2)) == [.reportResponseHead(Self.head(200))])
        #expect(machine.handle(.bodyReceived(id: 1, count: 1, now: 3)) == [.keepResponseBody])
    }

    @Test("every response byte counts against maximumResponseSize, a followed redirect's body included")
    func responseTooLarge() {
        var request = Self.request()
        request.maximumResponseSize = 100
        var machine = Self.machine(request)
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: Self.head(302, ["Location": "/a"]), now: 1))
        _ = machine.handle(.bodyReceived(id: 1, count: 60, now: 1))
        _ = machine.handle(.exchangeEnded(id: 1, error: nil, now: 1))
        _ = machine.handle(.responseHead(id: 2, head: Self.head(200), now: 1))
        #expect(machine.handle(.bodyReceived(id: 2, count: 40, now: 1)) == [.keepResponseBody])
        #expect(
            machine.handle(.bodyReceived(id: 2, count: 1, now: 1)) == [
                .cancelExchange(id: 2), .finish(.failure(.responseTooLarge(limit: 100))),
            ])
    }

    @Test("a decoded gzip body past the decompressed limit is a decompression error, even with equal limits")
    func decompressedLimit() {
        var request = Self.request()
        request.maximumResponseSize = 100
        request.maximumDecompressedResponseSize = 100
        var machine = Self.machine(request)
        _ = machine.handle(.start(now: 0))
        let head = Self.head(200, ["Content-Encoding": "gzip"])
        _ = machine.handle(.responseHead(id: 1, head: head, now: 1))
        _ = machine.handle(.bodyReceived(id: 1, count: 100, now: 1))
        #expect(
            machine.handle(.bodyReceived(id: 1, count: 1, now: 1))
                == [.cancelExchange(id: 1), .finish(.failure(.compression(underlying: .decompressedSizeLimitExceeded(limit: 100))))])
    }

    @Test("a body that cannot be decoded ends the send with its error")
    func bodyFailed() {
        var machine = Self.machine()
        _ = machine.handle(.start(now: 0))
        let error = FormDataError.compression(underlying: .decompressionFailed(code: -3, message: "bad"))
        #expect(machine.handle(.bodyFailed(id: 1, error: error)) == [.cancelExchange(id: 1), .finish(.failure(error))])
        #expect(machine.handle(.bodyFailed(id: 1, error: error)) == [])
    }

    @Test("the schemes a challenge value offers, quoted commas and parameters aside")
    func challengeSchemes() {
        #expect(AuthenticationChallenge.schemes(in: "digest realm=\"a, b\", nonce=\"x\", Basic realm=\"c\"") == ["Digest", "Basic"])
        #expect(AuthenticationChallenge.schemes(in: "NTLM, Negotiate") == ["NTLM", "Negotiate"])
        #expect(AuthenticationChallenge.schemes(in: "Bearer token68=") == ["Bearer"])
        #expect(AuthenticationChallenge.schemes(in: "") == [])
    }
}
