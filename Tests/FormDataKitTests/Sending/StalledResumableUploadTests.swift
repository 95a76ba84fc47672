import Foundation
import Testing

@testable import FormDataKit

/// A resumable-upload transport whose connections stall as behind a black hole: the first
/// exchange gets its `104` and sends half the body, then nothing more arrives either way (no
/// reset, no end) until it is cancelled. Offset requests answer the offset (or, `stallingOffsets`
/// of them, stall too); appends take the rest and answer `201`.
final class StallingResumableTransport: FormDataTransport, @unchecked Sendable {
    // `@unchecked`: `seen`, `cancelled` and `offsetStalls` are only touched under `lock`.
    private let lock = NSLock()
    private var seen: [TransportRequest] = []
    private var cancelled: [Int] = []
    private var offsetStalls: Int

    init(stallingOffsets: Int = 0) { offsetStalls = stallingOffsets }

    var capabilities: TransportCapabilities { [.resumableUploads, .informationalResponses] }
    /// The requests started, in order.
    var requests: [TransportRequest] { lock.withLock { seen } }
    /// The indexes (in ``requests``) of the exchanges that were cancelled.
    var cancelledExchanges: [Int] { lock.withLock { cancelled } }

    struct Task: TransportTask {
        let transport: StallingResumableTransport
        let index: Int
        func cancel() { transport.lock.withLock { transport.cancelled.append(index) } }
    }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        let (index, stallOffset) = lock.withLock { () -> (Int, Bool) in
            seen.append(request)
            let stalls = request.method == "HEAD" && offsetStalls > 0
            if stalls { offsetStalls -= 1 }
            return (seen.count - 1, stalls)
        }
        let total = Int64(request.body.length)
        DispatchQueue.global().async {
            switch request.method {
            case "HEAD":
                guard !stallOffset else { return }
                let half = String(Self.bodyLength / 2)
                observer.transportDidReceiveResponse(TransportResponseHead(statusCode: 204, headers: ["Upload-Offset": half]))
                observer.transportDidFinish(nil)
            case "PATCH":
                observer.transportDidSendBodyData(bytesSent: total, totalBytesSent: total, totalBytesExpected: total)
                observer.transportDidReceive(FormDataResponse(statusCode: 201, headers: [:], body: Data("stored".utf8)))
            default:
                observer.transportDidReceiveInformationalResponse(
                    TransportResponseHead(statusCode: 104, headers: ["Location": "/resumable_upload/1"]))
                observer.transportDidSendBodyData(bytesSent: total / 2, totalBytesSent: total / 2, totalBytesExpected: total)
            // Then silence: a black hole neither resets nor ends the connection.
            }
        }
        return Task(transport: self, index: index)
    }

    /// The body the tests send (``StalledResumableUploadTests/request(_:)``).
    static let bodyLength = 4096
}

/// An upload whose connection stalls (a black hole: no reset, no end) is resumed from the
/// server's offset once it has been idle for `timeOutSeconds`, as a lost connection is; before,
/// the stall timed the send out (and a retry on timeout would have sent the whole body again).
/// Each waits on the send's end, not on a clock of its own.
@Suite("A stalled resumable upload")
struct StalledResumableUploadTests {
    static func request(_ transport: StallingResumableTransport, resumptions: Int = 3) -> FormDataRequest {
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = transport
        request.shouldResumeInterruptedUploads = true
        request.numberOfTimesToResumeUpload = resumptions
        // The idle clock starts with the send; the transport's 104 and first body bytes come on
        // a global queue. On a machine with every core busy that delivery took over 0.2 s once
        // (busy clean clone: the exchange stalled before the 104, so nothing could be resumed).
        // 1 s leaves the scripted events room; the stall itself still ends each exchange.
        request.timeOutSeconds = 1
        request.appendPostData(Data(repeating: 0x61, count: StallingResumableTransport.bodyLength))
        return request
    }

    @Test("resumes from the server's offset after the idle timeout, on a new exchange; the stalled one is cancelled")
    func resumesAfterStall() async throws {
        let transport = StallingResumableTransport()
        let request = Self.request(transport)
        let response = try await request.start()
        #expect(response.statusCode == 201)
        #expect(request.uploadResumeCount == 1)
        let methods = transport.requests.map(\.method)
        #expect(methods == ["POST", "HEAD", "PATCH"])
        #expect(transport.cancelledExchanges == [0])
        let append = transport.requests.last
        #expect(append?.header("Upload-Offset") == String(StallingResumableTransport.bodyLength / 2))
        #expect(append?.body.length == UInt64(StallingResumableTransport.bodyLength / 2))
        #expect(request.uploadProgress.fractionCompleted == 1.0)
    }

    @Test("an offset request that stalls too is asked again, one more resumption")
    func stalledOffsetAsksAgain() async throws {
        let transport = StallingResumableTransport(stallingOffsets: 1)
        let request = Self.request(transport)
        let response = try await request.start()
        #expect(response.statusCode == 201)
        #expect(request.uploadResumeCount == 2)
        #expect(transport.requests.map(\.method) == ["POST", "HEAD", "HEAD", "PATCH"])
        #expect(transport.cancelledExchanges == [0, 1])
    }

    @Test("past numberOfTimesToResumeUpload a stall times the send out, as before")
    func stallPastTheLimitTimesOut() async throws {
        let transport = StallingResumableTransport(stallingOffsets: 5)
        let request = Self.request(transport, resumptions: 2)
        do {
            _ = try await request.start()
            Issue.record("the send succeeded")
        } catch {
            guard case .timedOut = error else {
                Issue.record("ended with \(error), want timedOut")
                return
            }
        }
        #expect(request.uploadResumeCount == 2)
        #expect(transport.requests.map(\.method) == ["POST", "HEAD", "HEAD"])
    }
}
