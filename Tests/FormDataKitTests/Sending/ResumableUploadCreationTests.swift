@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// Resumable uploads over a transport that cannot report a `104` (AsyncHTTPClient): the server is
/// asked first (`OPTIONS`), the upload is created without its content, and the body goes as an
/// append from offset 0. The machines as the send driver wires them; no sockets.
@Suite("ResumableUploadStateMachine, upload created first")
struct ResumableUploadCreationTests {
    typealias Pair = ResumableUploadStateMachineTests.Pair
    static func head(_ status: Int, _ headers: [String: String] = [:]) -> TransportResponseHead {
        ResumableUploadStateMachineTests.head(status, headers)
    }
    static let lost = ResumableUploadStateMachineTests.lost

    /// A started pair whose `OPTIONS` got `answer` and ended.
    static func probed(_ answer: TransportResponseHead) -> Pair {
        var pair = Pair(createsUploadFirst: true)
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.responseHead(id: -1, head: answer, now: 1))
        pair.feed(.bodyReceived(id: -1, count: 12, now: 1))
        pair.feed(.exchangeEnded(id: -1, error: nil, now: 2))
        return pair
    }

    @Test("OPTIONS first, then a creation without the content, then the whole body as a PATCH from 0; a loss resumes from the offset")
    func createsThenAppends() {
        var pair = Pair(createsUploadFirst: true)
        pair.carryOut(pair.send.handle(.start(now: 0)))
        let probe = pair.last
        #expect(probe.id == -1 && probe.request.method == "OPTIONS" && probe.request.body == .none)
        #expect(probe.request.header("Upload-Draft-Interop-Version") == "6" && probe.request.header("Upload-Complete") == nil)
        #expect(probe.request.url == ResumableUploadStateMachineTests.url)
        pair.feed(.responseHead(id: -1, head: Self.head(200, ["Upload-Limit": "min-size=0"]), now: 1))
        pair.feed(.exchangeEnded(id: -1, error: nil, now: 2))
        let creation = pair.last
        #expect(creation.id == -2 && creation.request.method == "POST" && creation.request.body == .none)
        #expect(creation.request.header("Upload-Complete") == "?0" && creation.request.header("Upload-Draft-Interop-Version") == "6")
        // The creation describes the upload: the server hands its head to the application.
        #expect(creation.request.header("Content-Type") == "text/plain" && creation.request.header("X-Trace") == "t1")
        pair.feed(.responseHead(id: -2, head: Self.head(201, ["Location": "/resumable_upload/9-2", "Upload-Offset": "0"]), now: 3))
        pair.feed(.exchangeEnded(id: -2, error: nil, now: 4))
        #expect(pair.resume.resumptionURL?.absoluteString == "http://example.test/resumable_upload/9-2")
        let append = pair.last
        #expect(append.id == -3 && append.request.method == "PATCH" && append.request.body == .data(ResumableUploadStateMachineTests.body))
        #expect(append.request.header("Upload-Offset") == "0" && append.request.header("Upload-Complete") == "?1")
        #expect(append.request.header("Content-Type") == "application/partial-upload" && !append.request.opensFreshConnection)
        pair.feed(.bodySent(id: -3, totalBytesSent: 7, now: 5))
        pair.feed(.exchangeEnded(id: -3, error: Self.lost, now: 6))
        #expect(pair.outcome == nil && pair.last.request.method == "HEAD" && pair.last.id == -4)
        pair.feed(.responseHead(id: -4, head: Self.head(204, ["Upload-Offset": "6"]), now: 7))
        pair.feed(.exchangeEnded(id: -4, error: nil, now: 8))
        #expect(pair.last.request.body == .data(Data("6789".utf8)) && pair.last.request.opensFreshConnection)
        pair.feed(.bodySent(id: -5, totalBytesSent: 4, now: 9))
        pair.feed(.responseHead(id: -5, head: Self.head(200), now: 10))
        pair.feed(.exchangeEnded(id: -5, error: nil, now: 11))
        guard case .response(let head, _, _)? = pair.outcome else {
            Issue.record("no response: \(String(describing: pair.outcome))")
            return
        }
        #expect(head.statusCode == 200 && pair.resume.resumeCount == 1)
        #expect(pair.progress.allSatisfy { $0 > 0 } && pair.progress.reduce(0, +) == 10)
    }

    @Test("a server whose OPTIONS answer has no Upload-Limit gets the ordinary request, unannounced")
    func withoutSupport() {
        var pair = Self.probed(Self.head(200, ["Allow": "GET, POST"]))
        let exchange = pair.last
        #expect(
            exchange.id == 1 && exchange.request.method == "POST" && exchange.request.body == .data(ResumableUploadStateMachineTests.body))
        #expect(exchange.request.header("Upload-Complete") == nil && exchange.request.header("Upload-Draft-Interop-Version") == nil)
        pair.feed(.bodySent(id: 1, totalBytesSent: 10, now: 3))
        pair.feed(.responseHead(id: 1, head: Self.head(200), now: 4))
        pair.feed(.exchangeEnded(id: 1, error: nil, now: 5))
        #expect(pair.outcome.map { if case .response(let head, _, _) = $0 { head.statusCode == 200 } else { false } } == true)
        #expect(pair.resume.resumptionURL == nil && pair.started.count == 2)
    }

    @Test("a creation answered otherwise (413) is the send's answer; nothing more is sent")
    func creationRefused() {
        var pair = Self.probed(Self.head(204, ["Upload-Limit": "max-size=5"]))
        #expect(pair.last.request.header("Upload-Complete") == "?0")
        pair.feed(.responseHead(id: -2, head: Self.head(413), now: 3))
        pair.feed(.bodyReceived(id: -2, count: 5, now: 3))
        pair.feed(.exchangeEnded(id: -2, error: nil, now: 4))
        guard case .response(let head, _, _)? = pair.outcome else {
            Issue.record("no response: \(String(describing: pair.outcome))")
            return
        }
        #expect(head.statusCode == 413 && pair.started.count == 2)
    }

    @Test("a creation answered with success but no Location fails the send with a typed error: the body never went")
    func createdWithoutLocation() {
        var pair = Self.probed(Self.head(200, ["Upload-Limit": "min-size=0"]))
        pair.feed(.responseHead(id: -2, head: Self.head(201), now: 3))
        pair.feed(.bodyReceived(id: -2, count: 2, now: 3))
        pair.feed(.exchangeEnded(id: -2, error: nil, now: 4))
        guard case .failure(.connectionFailure(let underlying))? = pair.outcome else {
            Issue.record("not failed: \(String(describing: pair.outcome))")
            return
        }
        #expect(underlying.domain == "FormDataKit.UploadResumption" && underlying.code == 201)
        #expect(underlying.message.contains("the body was not sent") && underlying.message.contains("example.test/upload"))
        #expect(pair.started.count == 2 && pair.progress.isEmpty)
    }

    @Test("a failed OPTIONS fails the exchange with its error (nothing of the body went)")
    func probeFails() {
        var pair = Pair(createsUploadFirst: true)
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.exchangeEnded(id: -1, error: Self.lost, now: 1))
        #expect(pair.outcome == .failure(Self.lost) && pair.started.count == 1)
    }

    @Test("cancelling during the creation stops it")
    func cancelDuringCreation() {
        var pair = Self.probed(Self.head(200, ["Upload-Limit": "min-size=0"]))
        pair.carryOut(pair.send.handle(.cancel))
        #expect(pair.cancelled == [1, -2] && pair.outcome == .failure(.cancelled))
    }
}
