@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// The rules of streamed parts without sockets: the reader's length checks, and the send state
/// machine's re-send rule, 411 and progress for a body of unknown length (events in, actions out).
@Suite("Streamed parts: reader and driver rules")
struct StreamRulesTests {
    typealias Machine = SendStateMachine
    static let url = URL(string: "http://example.test/upload")!
    static let timedOut = FormDataError.timedOut(underlying: UnderlyingError(domain: "libcurl", code: 28, message: "idle"))

    static func source(_ stream: StreamedContent) -> BodySource {
        BodySource(segments: [BodySegment(.bytes(Data("head".utf8))), BodySegment(.stream(stream)), BodySegment(.bytes(Data("tail".utf8)))])
    }

    static func request(_ stream: StreamedContent) -> TransportRequest {
        TransportRequest(url: url, method: "POST", headers: [], body: .source(source(stream)), timeoutInterval: 0)
    }

    static func machine(_ request: TransportRequest) -> Machine {
        Machine(request: request, configuration: .init(retriesOnTimeout: 2), wallClock: { Date(timeIntervalSince1970: 0) })
    }

    @Test("a body with a stream of unknown length has no known length, and reads to the stream's end")
    func unknownLength() throws {
        let body = Self.source(StreamedContent(InputStream(data: Data("middle".utf8)), length: nil, field: "s"))
        #expect(body.knownLength == nil)
        #expect(body.length == 8)
        #expect(try body.readAll() == Data("headmiddletail".utf8))
    }

    @Test("a declared length is checked both ways, naming the field and both lengths")
    func declaredLength() throws {
        let exact = Self.source(StreamedContent(InputStream(data: Data("middle".utf8)), length: 6, field: "s"))
        #expect(exact.knownLength == 14)
        #expect(try exact.readAll() == Data("headmiddletail".utf8))
        let short = Self.source(StreamedContent(InputStream(data: Data("mid".utf8)), length: 6, field: "short"))
        #expect(throws: FormDataError.streamLengthMismatch(field: "short", declaredLength: 6, streamedLength: 3)) { try short.readAll() }
        let long = Self.source(StreamedContent(InputStream(data: Data("middle!".utf8)), length: 6, field: "long"))
        #expect(throws: FormDataError.streamLengthMismatch(field: "long", declaredLength: 6, streamedLength: 7)) { try long.readAll() }
    }

    @Test("a stream longer than declared: its last bytes are never handed on")
    func lastBytesHeldBack() throws {
        let stream = StreamedContent(InputStream(data: Data("abcdefg".utf8)), length: 6, field: "long")
        let reader = BodySource(segments: [BodySegment(.stream(stream))]).makeReader(chunkSize: 4)
        var buffer = [UInt8](repeating: 0, count: 4)
        let first = try buffer.withUnsafeMutableBytes { (bytes) throws(FormDataError) in try reader.read(into: bytes) }
        #expect(first == 4)
        #expect(throws: FormDataError.streamLengthMismatch(field: "long", declaredLength: 6, streamedLength: 7)) {
            try buffer.withUnsafeMutableBytes { (bytes) throws(FormDataError) in try reader.read(into: bytes) }
        }
        #expect(reader.bytesRead == 4)
    }

    @Test("a stream is taken once; a factory makes one per attempt")
    func takenOnce() throws {
        let once = StreamedContent(InputStream(data: Data()), length: nil, field: "once")
        _ = try once.take()
        #expect(throws: FormDataError.streamNotReplayable(field: "once", reason: "a retry")) { try once.take(reason: "a retry") }
        let made = Locked<Int>(0)
        let factory = StreamedContent(length: nil, field: "made") {
            made.withLock { $0 += 1 }
            return InputStream(data: Data())
        }
        _ = try factory.take()
        _ = try factory.take()
        #expect(made.withLock { $0 } == 2)
        #expect(factory.isReplayable && !once.isReplayable)
    }

    @Test("a retry after the one-shot stream's bytes went fails saying why; with a factory it is sent again")
    func retryRule() {
        var oneShot = Self.machine(Self.request(StreamedContent(InputStream(data: Data()), length: nil, field: "once")))
        _ = oneShot.handle(.start(now: 0))
        _ = oneShot.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
        #expect(
            oneShot.handle(.exchangeEnded(id: 1, error: Self.timedOut, now: 2)) == [
                .finish(.failure(.streamNotReplayable(field: "once", reason: "a retry")))
            ])
        #expect(oneShot.retryCount == 0)

        let request = Self.request(StreamedContent(length: nil, field: "made") { InputStream(data: Data()) })
        var factory = Self.machine(request)
        _ = factory.handle(.start(now: 0))
        _ = factory.handle(.bodySent(id: 1, totalBytesSent: 10, now: 1))
        let actions = factory.handle(.exchangeEnded(id: 1, error: Self.timedOut, now: 2))
        #expect(actions.contains(.startExchange(id: 2, request: request)))
    }

    @Test("a one-shot stream whose bytes did not go yet may be retried (the reader refuses it if it was read)")
    func retryBeforeBytes() {
        let request = Self.request(StreamedContent(InputStream(data: Data()), length: nil, field: "once"))
        var machine = Self.machine(request)
        _ = machine.handle(.start(now: 0))
        #expect(machine.handle(.exchangeEnded(id: 1, error: Self.timedOut, now: 2)).contains(.startExchange(id: 2, request: request)))
    }

    @Test("a 411 to a body of unknown length is lengthRequired; to a known length it is the response")
    func lengthRequired() {
        let head = TransportResponseHead(statusCode: 411, headers: [:])
        var machine = Self.machine(Self.request(StreamedContent(InputStream(data: Data()), length: nil, field: "s")))
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: head, now: 1))
        #expect(
            machine.handle(.exchangeEnded(id: 1, error: nil, now: 2)).last
                == .finish(.failure(.lengthRequired(url: Self.url.absoluteString))))

        var known = Self.machine(Self.request(StreamedContent(InputStream(data: Data()), length: 0, field: "s")))
        _ = known.handle(.start(now: 0))
        _ = known.handle(.responseHead(id: 1, head: head, now: 1))
        guard case .finish(.response(let answered, _, _))? = known.handle(.exchangeEnded(id: 1, error: nil, now: 2)).last else {
            Issue.record("a 411 to a known length was not the response")
            return
        }
        #expect(answered.statusCode == 411)
    }

    @Test("progress of a body of unknown length is not capped and ends at what was sent")
    func progressUnknownLength() {
        var machine = Self.machine(Self.request(StreamedContent(InputStream(data: Data()), length: nil, field: "s")))
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: TransportResponseHead(statusCode: 200, headers: [:]), now: 1))
        #expect(machine.handle(.bodySent(id: 1, totalBytesSent: 5_000, now: 2)) == [.reportProgress(delta: 5_000)])
        let end = machine.handle(.exchangeEnded(id: 1, error: nil, now: 3))
        #expect(!end.contains { if case .reportProgress = $0 { true } else { false } })
        #expect(machine.reportedBodyBytes == 5_000)
    }
}
