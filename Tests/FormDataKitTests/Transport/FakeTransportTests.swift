import Foundation
import FormDataKit
import Testing

/// A scripted transport: each start reports the next outcome, with progress in two halves.
final class ScriptedTransport: FormDataTransport, @unchecked Sendable {
    // `@unchecked`: `outcomes` and `seen` are only touched under `lock`.
    private let lock = NSLock()
    private var outcomes: [Result<FormDataResponse, FormDataError>]
    private var seen: [TransportRequest] = []

    init(_ outcomes: [Result<FormDataResponse, FormDataError>]) { self.outcomes = outcomes }

    var requests: [TransportRequest] { lock.withLock { seen } }

    struct NoTask: TransportTask { func cancel() {} }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        let outcome = lock.withLock { () -> Result<FormDataResponse, FormDataError> in
            seen.append(request)
            return outcomes.removeFirst()
        }
        DispatchQueue.global().async {
            let total = Int64(request.body.length)
            observer.transportDidSendBodyData(bytesSent: total / 2, totalBytesSent: total / 2, totalBytesExpected: total)
            switch outcome {
            case .success(let response):
                observer.transportDidSendBodyData(bytesSent: total - total / 2, totalBytesSent: total, totalBytesExpected: total)
                observer.transportDidReceive(response)
            case .failure(let error):
                observer.transportDidFinish(error)
            }
        }
        return NoTask()
    }
}

/// A transport whose start blocks until released (or 10 s), as a start that opens a file on a
/// hung file system would, and reports nothing: only the send's own clock can end it.
final class BlockingStartTransport: FormDataTransport, @unchecked Sendable {
    private let gate = DispatchSemaphore(value: 0)
    let cancelled = Locked(false)

    struct Task: TransportTask {
        let cancelled: Locked<Bool>
        func cancel() { cancelled.withLock { $0 = true } }
    }

    func release() { gate.signal() }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        // Until the test releases it: its own limit is far beyond the test's waits, so that a
        // start that held the send could never look like a timeout that ended it.
        _ = gate.wait(timeout: .now() + 600)
        return Task(cancelled: cancelled)
    }
}

@Suite("Lifecycle over a scripted FormDataTransport")
struct FakeTransportTests {
    static let timeout = FormDataError.timedOut(underlying: UnderlyingError(domain: NSURLErrorDomain, code: -1001, message: "timed out"))
    static let ok = FormDataResponse(statusCode: 201, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data("créé".utf8))

    @Test("two timeouts then success: retryCount 2, progress reset with negative didSendBytes, same request each time")
    func retriesThenSuccess() async throws {
        let transport = ScriptedTransport([.failure(Self.timeout), .failure(Self.timeout), .success(Self.ok)])
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = transport
        request.numberOfTimesToRetryOnTimeout = 3
        request.addRequestHeader("X-Trace", value: "abc")
        request.setPostValue("value", forKey: "key")
        let delegate = RecordingDelegate()
        request.delegate = delegate
        let response = try await request.start()

        #expect(response.statusCode == 201)
        #expect(request.retryCount == 2)
        #expect(request.responseString == "créé")
        #expect(request.uploadProgress.fractionCompleted == 1.0)
        let sent = transport.requests
        #expect(sent.count == 3)
        #expect(sent.allSatisfy { $0.body == sent[0].body })
        #expect(sent[0] == sent[2])
        #expect(sent[0].header("X-Trace") == "abc")
        #expect(sent[0].header("Content-Length") == nil)
        #expect(sent[0].header("Accept-Encoding") == "gzip")
        #expect(sent[0].method == "POST")
        #expect(sent[0].timeoutInterval == 10)
        let body = "key=value"
        let half = Int64(body.utf8.count / 2)
        // Each timed-out try's bytes are taken back; the last try's add up to the body (the
        // driver may report bytes that arrive while a callback is pending in one increment).
        let increments = delegate.sentIncrements
        #expect(Array(increments.prefix(4)) == [half, -half, half, -half])
        #expect(increments.dropFirst(4).allSatisfy { $0 > 0 })
        #expect(increments.dropFirst(4).reduce(0, +) == Int64(body.utf8.count))
        #expect(delegate.log == ["started", "sent", "headers", "finished"])
    }

    @Test("retries exhausted: the timeout is the error")
    func retriesExhausted() async throws {
        let transport = ScriptedTransport([.failure(Self.timeout), .failure(Self.timeout)])
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = transport
        request.numberOfTimesToRetryOnTimeout = 1
        request.setPostValue("value", forKey: "key")
        await #expect(throws: Self.timeout) { try await request.start() }
        #expect(request.retryCount == 1)
        #expect(request.error == Self.timeout)
        #expect(request.responseStatusCode == 0)
        #expect(request.responseStatusMessage == nil)
    }

    @Test("a transport whose start blocks, as a hung file open would, does not keep the send from ending by its timeout")
    func blockingStartTimesOut() async throws {
        let transport = BlockingStartTransport()
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = transport
        request.timeOutSeconds = 0.5
        request.setPostValue("value", forKey: "key")
        let ended = DispatchSemaphore(value: 0)
        request.failedBlock = { ended.signal() }
        request.completionBlock = { ended.signal() }
        request.startAsynchronous()
        // The send's own clock ends it at 0.5 s whatever its transport does; a transport start
        // that held it would hold it until released below. 30 s (it was 5) is a bound for a busy
        // machine's late timer, not the promise: the start is released only after this wait.
        let endedInTime = await TransportTestSupport.blocking { ended.wait(timeout: .now() + 30) == .success }
        transport.release()
        #expect(endedInTime, "the send did not end by its 0.5 s timeout while its transport's start was blocked")
        if case .timedOut? = request.error {} else { Issue.record("expected timedOut, got \(String(describing: request.error))") }
        // Once the start returns, the exchange the send gave up on is cancelled.
        let deadline = Date(timeIntervalSinceNow: 30)
        while !transport.cancelled.current && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(transport.cancelled.current)
    }
}
