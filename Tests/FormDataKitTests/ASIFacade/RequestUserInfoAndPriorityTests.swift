import Foundation
import FormDataKitTesting
import Testing

@testable import FormDataKit

/// Issue 55.1: `userInfo`, `tag` and `queuePriority` on a request, as ported completion code
/// and queue code use them.
@Suite("55.1 userInfo, tag and queuePriority")
struct RequestUserInfoAndPriorityTests {
    typealias Support = TransportTestSupport

    @Test("userInfo and tag are kept, read back in the completion, and copied")
    func userInfoAndTag() async throws {
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = TransportKind.curl.transport
            request.timeOutSeconds = Support.patientTimeout
            #expect(request.userInfo == nil)
            #expect(request.tag == 0)
            request.userInfo = ["photoID": 42, "album": "summer"]
            request.tag = 7
            request.setPostValue("x", forKey: "field")
            let seen = Locked<(Int?, Int)>((nil, 0))
            request.completionBlock = { [request] in seen.withLock { $0 = (request.userInfo?["photoID"] as? Int, request.tag) } }
            _ = try await request.start()
            #expect(seen.current.0 == 42)
            #expect(seen.current.1 == 7)
            let copied = request.copy()
            #expect(copied.userInfo?["album"] as? String == "summer")
            #expect(copied.tag == 7)
            #expect(receiver.lastRequest?.form?.value("field") == "x")
        }
    }

    @Test("higher queuePriority starts first; equal priorities in the order added")
    func priorityOrder() {
        var machine = NetworkQueueStateMachine()
        _ = machine.handle(.setMaxConcurrent(1))
        let priorities = [0, -4, 4, 4, 0, 8]
        for (index, priority) in priorities.enumerated() {
            #expect(machine.handle(.add(id: index + 1, host: "a", uploadShare: 1, priority: priority)).isEmpty)
        }
        var order = machine.handle(.setSuspended(false))
        for _ in priorities.indices.dropLast() {
            guard case .start(let id) = order.last else { break }
            order += machine.handle(.ended(id: id, succeeded: true))
        }
        let started = order.compactMap { action -> Int? in if case .start(let id) = action { id } else { nil } }
        #expect(started == [6, 3, 4, 1, 5, 2])
    }

    @Test("a request's queuePriority reaches the queue and its operation")
    func priorityReachesQueueAndOperation() throws {
        let queue = NetworkQueue()
        queue.maxConcurrentOperationCount = 0
        let low = FormDataRequest(url: URL(string: "http://127.0.0.1:9/low")!)
        low.queuePriority = .low
        let high = FormDataRequest(url: URL(string: "http://127.0.0.1:9/high")!)
        high.queuePriority = .veryHigh
        #expect(FormDataRequest(url: low.url).queuePriority == .normal)
        try queue.addOperation(low)
        try queue.addOperation(high)
        // The machine starts the very-high one first, though it was added second.
        let actions = queue.core.withLock { core in
            _ = core.machine.handle(.setSuspended(false))
            return core.machine.handle(.setMaxConcurrent(1))
        }
        #expect(actions == [.start(id: 2)])
        #expect(high.makeOperation().queuePriority == .veryHigh)
        queue.reset()
    }
}
