@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTesting
import Testing

@testable import FormDataKit

/// A transport that answers `201` to every exchange — at once when it is open, else when
/// ``release()`` is called — and ends a cancelled one with the cancelled error. A real send
/// through the driver, without sockets.
final class GatedTransport: FormDataTransport, @unchecked Sendable {
    // `@unchecked`: `pending`, `isOpen` and `started` are only touched under `lock`.
    private let lock = NSLock()
    private var pending: [Exchange] = []
    private var isOpen: Bool
    private var started = 0

    /// One exchange; it reports its end once (a response or the cancel, whichever comes first).
    final class Exchange: TransportTask, @unchecked Sendable {
        let observer: any TransportObserver
        private let ended = Locked(false)
        init(observer: any TransportObserver) { self.observer = observer }

        /// True the first time only.
        private func claimEnd() -> Bool {
            ended.withLock { done in
                defer { done = true }
                return !done
            }
        }

        func answer() {
            guard claimEnd() else { return }
            observer.transportDidReceive(FormDataResponse(statusCode: 201, headers: [:], body: Data("ok".utf8)))
        }

        func cancel() {
            guard claimEnd() else { return }
            DispatchQueue.global().async { self.observer.transportDidFinish(.cancelled) }
        }
    }

    init(open: Bool) { isOpen = open }

    /// How many exchanges were started.
    var startedCount: Int { lock.withLock { started } }

    /// Answers the exchanges held so far and every later one at once.
    func release() {
        let held = lock.withLock { () -> [Exchange] in
            isOpen = true
            defer { pending = [] }
            return pending
        }
        for exchange in held { DispatchQueue.global().async { exchange.answer() } }
    }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        let exchange = Exchange(observer: observer)
        let answerNow = lock.withLock { () -> Bool in
            started += 1
            if !isOpen { pending.append(exchange) }
            return isOpen
        }
        if answerNow { DispatchQueue.global().async { exchange.answer() } }
        return exchange
    }
}

/// A request is in one queue at a time and is never added while it is being sent: the add is
/// refused with ``FormDataError/requestAlreadyQueued(url:isRunning:)``, the queue always
/// finishes, and the refusal never cancels the batch (issue 53).
@Suite("NetworkQueue membership: a request queued or running is refused, the queue always finishes")
struct QueueMembershipTests {
    static let url = URL(string: "http://example.invalid/upload")!

    static func request(_ transport: any FormDataTransport, _ path: String = "/upload") -> FormDataRequest {
        let request = FormDataRequest(url: URL(string: "http://example.invalid\(path)")!)
        request.transport = transport
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        request.setPostValue("value", forKey: "field")
        return request
    }

    /// Whether `queue` finished (``NetworkQueue/waitUntilAllOperationsAreFinished()`` returned)
    /// within `seconds`. The bound only turns a queue that never finishes (the bug) into a
    /// failure instead of a hung suite: these queues finish in milliseconds, so 60 s is over
    /// 1000× what they need, even with both cores busy.
    static func finishes(_ queue: NetworkQueue, within seconds: Double = 60) async -> Bool {
        await TransportTestSupport.blocking {
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                queue.waitUntilAllOperationsAreFinished()
                done.signal()
            }
            return done.wait(timeout: .now() + seconds) == .success
        }
    }

    /// Waits for `request`'s end (its completion or failed block), with the same wide bound.
    static func ends(_ ended: DispatchSemaphore, within seconds: Double = 60) async -> Bool {
        await TransportTestSupport.blocking { ended.wait(timeout: .now() + seconds) == .success }
    }

    // MARK: - The machine, without sockets

    @Test("machine: an end the queue never added, or a second end, changes nothing: no cancel, one queueFinished")
    func machineIgnoresUnknownEnds() {
        var machine = NetworkQueueStateMachine()
        #expect(machine.handle(.add(id: 1, host: "a", uploadShare: 1)).isEmpty)
        #expect(machine.handle(.add(id: 2, host: "a", uploadShare: 1)).isEmpty)
        #expect(machine.handle(.setSuspended(false)) == [.start(id: 1), .start(id: 2)])
        // A failure the queue never added (a refused request) cancels nothing.
        #expect(machine.handle(.ended(id: 7, succeeded: false)).isEmpty)
        #expect(machine.requestsCount == 2)
        #expect(machine.handle(.ended(id: 1, succeeded: true)).isEmpty)
        // A second end of one request is not a failure of the batch and finishes nothing.
        #expect(machine.handle(.ended(id: 1, succeeded: false)).isEmpty)
        #expect(machine.handle(.ended(id: 2, succeeded: true)) == [.queueFinished])
        #expect(machine.requestsCount == 0)
        #expect(machine.uploadUnitsDone == machine.totalUploadUnits)
    }

    // MARK: - Real sends

    @Test("added twice to one queue: the second add throws naming the URL; the request is sent once and the queue finishes")
    func addedTwiceToOneQueue() async throws {
        let transport = GatedTransport(open: true)
        let recorder = QueueRecorder()
        let queue = NetworkQueue()
        queue.delegate = recorder
        let request = Self.request(transport, "/twice")
        try queue.addOperation(request)
        #expect(throws: FormDataError.requestAlreadyQueued(url: "http://example.invalid/twice", isRunning: false)) {
            try queue.addOperation(request)
        }
        #expect(queue.requestsCount == 1)
        queue.go()
        #expect(await Self.finishes(queue))
        #expect(request.error == nil)
        #expect(request.responseStatusCode == 201)
        #expect(transport.startedCount == 1)
        #expect(recorder.entries.filter { $0 == "queueFinished" }.count == 1)
        #expect(queue.uploadProgress.fractionCompleted == 1.0)
    }

    @Test("in a second queue: refused there; both queues finish and the second one's batch is not cancelled")
    func addedToTwoQueues() async throws {
        let transport = GatedTransport(open: true)
        let first = NetworkQueue()
        let second = NetworkQueue()
        let shared = Self.request(transport, "/shared")
        let other = Self.request(transport, "/other")
        try first.addOperation(shared)
        #expect(throws: FormDataError.requestAlreadyQueued(url: "http://example.invalid/shared", isRunning: false)) {
            try second.addOperation(shared)
        }
        try second.addOperation(other)
        #expect(second.requestsCount == 1)
        second.go()
        first.go()
        #expect(await Self.finishes(first))
        #expect(await Self.finishes(second))
        #expect(shared.error == nil)
        #expect(other.error == nil)
        #expect(transport.startedCount == 2)
        // Once it has ended it may join a queue again.
        try second.addOperation(shared)
        #expect(await Self.finishes(second))
        #expect(shared.error == nil)
    }

    @Test("being sent by hand: the add throws (isRunning); the batch, cancelling on failure, is not cancelled and finishes")
    func runningRequestRefused() async throws {
        let held = GatedTransport(open: false)
        let open = GatedTransport(open: true)
        let running = Self.request(held, "/running")
        let ended = DispatchSemaphore(value: 0)
        running.completionBlock = { ended.signal() }
        running.failedBlock = { ended.signal() }
        running.startAsynchronous()
        let queue = NetworkQueue()
        #expect(queue.shouldCancelAllRequestsOnFailure)
        let rest = (0..<3).map { Self.request(open, "/rest\($0)") }
        try queue.addOperation(rest[0])
        #expect(throws: FormDataError.requestAlreadyQueued(url: "http://example.invalid/running", isRunning: true)) {
            try queue.addOperation(running)
        }
        // Refused while in flight: let it go on now (held, it is idle, and its own idle timeout
        // would end it if the batch below were slow to run on a loaded machine).
        held.release()
        for request in rest.dropFirst() { try queue.addOperation(request) }
        queue.go()
        #expect(await Self.finishes(queue))
        for request in rest { #expect(request.error == nil) }
        // The send by hand is untouched by the refusal.
        #expect(await Self.ends(ended))
        #expect(running.error == nil)
        #expect(running.responseStatusCode == 201)
    }

    @Test("queued, then started by hand: that send is the queue's; the batch is not cancelled and the queue finishes once")
    func startedByHandWhileQueued() async throws {
        let held = GatedTransport(open: false)
        let open = GatedTransport(open: true)
        let recorder = QueueRecorder()
        let queue = NetworkQueue()
        queue.delegate = recorder
        let byHand = Self.request(held, "/by-hand")
        let rest = (0..<3).map { Self.request(open, "/rest\($0)") }
        try queue.addOperation(byHand)
        for request in rest { try queue.addOperation(request) }
        byHand.startAsynchronous()
        // The queue's start finds it being sent: before the fix that was a `requestInProgress`
        // failure that cancelled the rest.
        queue.go()
        held.release()
        #expect(await Self.finishes(queue))
        #expect(byHand.error == nil)
        for request in rest { #expect(request.error == nil, "\(request.url)") }
        #expect(held.startedCount == 1)
        #expect(queue.requestsCount == 0)
        #expect(recorder.entries.filter { $0 == "queueFinished" }.count == 1)
    }

    @Test("over loopback: added twice, sent once, the queue finishes", arguments: TransportKind.allCases)
    func addedTwiceOverLoopback(kind: TransportKind) async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let queue = NetworkQueue()
            let request = NetworkQueueTests.request(receiver.url("/twice"), kind)
            let other = NetworkQueueTests.request(receiver.url("/other"), kind)
            try queue.addOperation(request)
            try queue.addOperation(other)
            #expect(throws: FormDataError.requestAlreadyQueued(url: receiver.url("/twice").absoluteString, isRunning: false)) {
                try queue.addOperation(request)
            }
            queue.go()
            #expect(await Self.finishes(queue))
            #expect(request.responseStatusCode == 200)
            #expect(other.responseStatusCode == 200)
            #expect(receiver.requests.count == 2)
        }
    }
}
