@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// Resumable uploads, step by step, as the send driver composes them: the resumption machine in
/// front of the send machine. No sockets, no threads, no clock.
@Suite("ResumableUploadStateMachine")
struct ResumableUploadStateMachineTests {
    static let url = URL(string: "http://example.test/upload")!
    static let body = Data("0123456789".utf8)
    static let lost = FormDataError.connectionFailure(underlying: UnderlyingError(domain: "curl", code: 55, message: "Send failure"))

    /// The two machines wired as ``SendDriver`` wires them, recording what reaches the transport.
    struct Pair {
        var send: SendStateMachine
        var resume: ResumableUploadStateMachine
        var started: [(id: Int, request: TransportRequest)] = []
        var cancelled: [Int] = []
        var progress: [Int64] = []
        var outcome: SendStateMachine.Outcome?

        init(
            limit: Int = 3, body: TransportRequest.Body = .data(ResumableUploadStateMachineTests.body), createsUploadFirst: Bool = false,
            idleTimeout: UInt64 = 0
        ) {
            let request = TransportRequest(
                url: ResumableUploadStateMachineTests.url, method: "POST",
                headers: [(name: "Content-Type", value: "text/plain"), (name: "X-Trace", value: "t1")], body: body, timeoutInterval: 0)
            send = SendStateMachine(request: request, configuration: .init(idleTimeoutNanoseconds: idleTimeout))
            resume = ResumableUploadStateMachine(maximumResumptions: limit, createsUploadFirst: createsUploadFirst)
        }

        mutating func feed(_ event: SendStateMachine.Event) {
            // As the driver: a stalled resumable upload resumes rather than timing out.
            var steps: [ResumableUploadStateMachine.Step]?
            if case .clock(let now) = event, send.isStalled(at: now) { steps = resume.stalled(now: now) }
            for step in steps ?? resume.incoming(event) {
                switch step {
                case .forward(let event): carryOut(send.handle(event))
                case .startExchange(let id, let request): started.append((id, request))
                case .cancelExchange(let id): cancelled.append(id)
                }
            }
        }

        mutating func carryOut(_ actions: [SendStateMachine.Action]) {
            for action in actions.flatMap({ resume.outgoing($0) }) {
                switch action {
                case .startExchange(let id, let request): started.append((id, request))
                case .cancelExchange(let id): cancelled.append(id)
                case .reportProgress(let delta): progress.append(delta)
                case .finish(let finished): outcome = finished
                default: break
                }
            }
        }

        var last: (id: Int, request: TransportRequest) { started[started.count - 1] }
    }

    static func head(_ status: Int, _ headers: [String: String] = [:]) -> TransportResponseHead {
        TransportResponseHead(statusCode: status, headers: headers)
    }

    /// A pair whose first exchange got a 104 and then lost its connection after `sent` bytes.
    static func interrupted(after sent: Int64, limit: Int = 3) -> Pair {
        var pair = Pair(limit: limit)
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.informationalResponse(id: 1, head: head(104, ["Location": "/resumable_upload/7-1"]), now: 1))
        pair.feed(.bodySent(id: 1, totalBytesSent: sent, now: 2))
        pair.feed(.exchangeEnded(id: 1, error: lost, now: 3))
        return pair
    }

    @Test("the first request announces interop version 6 and Upload-Complete: ?1")
    func announces() {
        var pair = Pair()
        pair.carryOut(pair.send.handle(.start(now: 0)))
        let request = pair.last.request
        #expect(pair.last.id == 1)
        #expect(request.header("Upload-Draft-Interop-Version") == "6")
        #expect(request.header("Upload-Complete") == "?1")
        #expect(request.method == "POST" && request.body == .data(Self.body))
    }

    @Test("a 104's Location, resolved against the request URL, is the resumption URL")
    func resumptionURL() {
        var pair = Pair()
        pair.carryOut(pair.send.handle(.start(now: 0)))
        #expect(pair.resume.resumptionURL == nil)
        pair.feed(.informationalResponse(id: 1, head: Self.head(100), now: 1))
        #expect(pair.resume.resumptionURL == nil)
        pair.feed(.informationalResponse(id: 1, head: Self.head(104, ["Location": "/resumable_upload/7-1"]), now: 1))
        #expect(pair.resume.resumptionURL?.absoluteString == "http://example.test/resumable_upload/7-1")
    }

    @Test("a lost connection asks the offset with HEAD, then PATCHes the rest from it; the answer is the send's")
    func headThenPatch() throws {
        var pair = Self.interrupted(after: 8)
        #expect(pair.outcome == nil)
        let ask = pair.last
        #expect(ask.id == -1 && ask.request.method == "HEAD" && ask.request.body == .none)
        #expect(ask.request.url.absoluteString == "http://example.test/resumable_upload/7-1")
        #expect(ask.request.header("Upload-Draft-Interop-Version") == "6")
        #expect(ask.request.header("X-Trace") == "t1" && ask.request.header("Content-Type") == nil)
        pair.feed(.responseHead(id: -1, head: Self.head(204, ["Upload-Offset": "6", "Upload-Complete": "?0"]), now: 4))
        pair.feed(.exchangeEnded(id: -1, error: nil, now: 5))
        let append = pair.last
        #expect(append.id == -2 && append.request.method == "PATCH")
        #expect(append.request.body == .data(Data("6789".utf8)))
        #expect(append.request.header("Upload-Offset") == "6")
        #expect(append.request.header("Content-Type") == "application/partial-upload")
        #expect(append.request.header("Upload-Complete") == "?1")
        pair.feed(.bodySent(id: -2, totalBytesSent: 4, now: 6))
        pair.feed(.responseHead(id: -2, head: Self.head(201, ["Upload-Offset": "10"]), now: 7))
        pair.feed(.exchangeEnded(id: -2, error: nil, now: 8))
        guard case .response(let head, let url, _)? = pair.outcome else {
            Issue.record("no response: \(String(describing: pair.outcome))")
            return
        }
        #expect(head.statusCode == 201 && url == Self.url)
        #expect(pair.resume.resumeCount == 1)
        // Monotonic, and exactly the body's length in all.
        #expect(pair.progress.allSatisfy { $0 > 0 })
        #expect(pair.progress.reduce(0, +) == 10)
    }

    @Test("a 409 on the PATCH asks the offset again")
    func conflictAsksAgain() {
        var pair = Self.interrupted(after: 5)
        pair.feed(.responseHead(id: -1, head: Self.head(204, ["Upload-Offset": "3"]), now: 4))
        pair.feed(.exchangeEnded(id: -1, error: nil, now: 5))
        pair.feed(.responseHead(id: -2, head: Self.head(409), now: 6))
        pair.feed(.bodyReceived(id: -2, count: 3, now: 6))
        pair.feed(.exchangeEnded(id: -2, error: nil, now: 7))
        #expect(pair.outcome == nil)
        #expect(pair.last.id == -3 && pair.last.request.method == "HEAD")
        pair.feed(.responseHead(id: -3, head: Self.head(204, ["Upload-Offset": "4"]), now: 8))
        pair.feed(.exchangeEnded(id: -3, error: nil, now: 9))
        #expect(pair.last.request.body == .data(Data("456789".utf8)))
        #expect(pair.resume.resumeCount == 2)
        #expect(pair.progress.allSatisfy { $0 > 0 })
    }

    @Test("a server without support (no 104): a lost connection fails the send as an ordinary one")
    func noSupport() {
        var pair = Pair()
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.bodySent(id: 1, totalBytesSent: 4, now: 1))
        pair.feed(.exchangeEnded(id: 1, error: Self.lost, now: 2))
        #expect(pair.outcome == .failure(Self.lost))
        #expect(pair.started.count == 1 && pair.resume.resumeCount == 0)
    }

    @Test("past numberOfTimesToResumeUpload the send fails with a typed error naming the limit")
    func limitReached() {
        var pair = Self.interrupted(after: 2, limit: 1)
        pair.feed(.responseHead(id: -1, head: Self.head(204, ["Upload-Offset": "2"]), now: 4))
        pair.feed(.exchangeEnded(id: -1, error: nil, now: 5))
        pair.feed(.exchangeEnded(id: -2, error: Self.lost, now: 6))
        guard case .failure(.connectionFailure(let underlying))? = pair.outcome else {
            Issue.record("not failed: \(String(describing: pair.outcome))")
            return
        }
        #expect(underlying.domain == "FormDataKit.UploadResumption" && underlying.code == 1)
        #expect(underlying.message.contains("numberOfTimesToResumeUpload (1)"))
        #expect(pair.started.count == 3)
    }

    @Test("an offset request the server cannot answer (404) fails the send, naming the upload")
    func unknownUpload() {
        var pair = Self.interrupted(after: 2)
        pair.feed(.responseHead(id: -1, head: Self.head(404), now: 4))
        pair.feed(.exchangeEnded(id: -1, error: nil, now: 5))
        guard case .failure(.connectionFailure(let underlying))? = pair.outcome else {
            Issue.record("not failed: \(String(describing: pair.outcome))")
            return
        }
        #expect(underlying.code == 404 && underlying.message.contains("/resumable_upload/7-1"))
    }

    @Test("a loss after the response head began is not resumed; a timeout the transport reports is not resumed")
    func notResumed() {
        var pair = Pair()
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.informationalResponse(id: 1, head: Self.head(104, ["Location": "/r/1"]), now: 1))
        pair.feed(.responseHead(id: 1, head: Self.head(200), now: 2))
        pair.feed(.exchangeEnded(id: 1, error: Self.lost, now: 3))
        #expect(pair.outcome == .failure(Self.lost) && pair.started.count == 1)
        let timeout = FormDataError.timedOut(underlying: UnderlyingError(domain: "curl", code: 28, message: "t"))
        var second = Pair()
        second.carryOut(second.send.handle(.start(now: 0)))
        second.feed(.informationalResponse(id: 1, head: Self.head(104, ["Location": "/r/1"]), now: 1))
        second.feed(.exchangeEnded(id: 1, error: timeout, now: 3))
        #expect(second.outcome == .failure(timeout) && second.started.count == 1)
    }

    @Test("a stall (idle past the timeout, no head) stops the exchange and asks the offset; after a head it times out")
    func stallResumes() {
        var pair = Pair(idleTimeout: 10)
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.informationalResponse(id: 1, head: Self.head(104, ["Location": "/r/1"]), now: 1))
        pair.feed(.bodySent(id: 1, totalBytesSent: 6, now: 2))
        pair.feed(.clock(now: 12))
        #expect(pair.cancelled == [1] && pair.last.id == -1 && pair.last.request.method == "HEAD")
        #expect(pair.outcome == nil && pair.resume.resumeCount == 1)
        // The idle clock started again at the stall: not stalled before 22.
        #expect(!pair.send.isStalled(at: 21) && pair.send.isStalled(at: 22))
        pair.feed(.clock(now: 22))
        #expect(pair.cancelled == [1, -1] && pair.last.id == -2 && pair.last.request.method == "HEAD")
        pair.feed(.responseHead(id: -2, head: Self.head(204, ["Upload-Offset": "6"]), now: 23))
        pair.feed(.exchangeEnded(id: -2, error: nil, now: 24))
        #expect(pair.last.request.method == "PATCH" && pair.last.request.body == .data(Data("6789".utf8)))
        var answered = Pair(idleTimeout: 10)
        answered.carryOut(answered.send.handle(.start(now: 0)))
        answered.feed(.informationalResponse(id: 1, head: Self.head(104, ["Location": "/r/1"]), now: 1))
        answered.feed(.responseHead(id: 1, head: Self.head(200), now: 2))
        answered.feed(.clock(now: 12))
        guard case .failure(.timedOut)? = answered.outcome else {
            Issue.record("not timed out: \(String(describing: answered.outcome))")
            return
        }
        #expect(answered.started.count == 1 && answered.resume.resumeCount == 0)
    }

    @Test("cancelling the send also stops the resumption's exchange in flight")
    func cancelStopsResumption() {
        var pair = Self.interrupted(after: 2)
        pair.carryOut(pair.send.handle(.cancel))
        #expect(pair.cancelled == [1, -1])
        #expect(pair.outcome == .failure(.cancelled))
    }

    @Test("a body from an offset: whole segments dropped, the one it falls in cut, file ranges start later")
    func bodySuffix() {
        let source = BodySource(segments: [
            BodySegment(.bytes(Data("abc".utf8))),
            BodySegment(.file(FileRange(path: "/f", offset: 10, length: 5, expectedFileSize: 20)), partContentType: "x/y"),
            BodySegment(.bytes(Data("xyz".utf8))),
        ])
        #expect(source.suffix(from: 0) == source)
        #expect(
            source.suffix(from: 5).segments == [
                BodySegment(.file(FileRange(path: "/f", offset: 12, length: 3, expectedFileSize: 20)), partContentType: "x/y"),
                BodySegment(.bytes(Data("xyz".utf8))),
            ])
        #expect(source.suffix(from: 9).segments == [BodySegment(.bytes(Data("yz".utf8)))])
        #expect(source.suffix(from: 11).length == 0)
        let file = TransportRequest.Body.file(path: "/spool", length: 100)
        #expect(file.suffix(from: 40).length == 60)
        #expect(TransportRequest.Body.data(Data("hello".utf8)).suffix(from: 2) == .data(Data("llo".utf8)))
    }
}
