import Foundation
import Testing

@testable import FormDataKit

/// Issue 55.11: ASI's testAddingRequestsToQueueWhileInProgress — five requests at once, then one
/// at a time while (and after) the queue drains: the totals count all ten until a reset.
@Suite("55.11 queue totals run on until reset")
struct QueueTotalsRunOnTests {
    typealias Machine = NetworkQueueStateMachine

    /// Ends `id` after its head said `length` and all of it arrived.
    static func download(_ machine: inout Machine, _ id: Int, length: UInt64) -> [Machine.Action] {
        _ = machine.handle(.responseHead(id: id, expectedLength: length))
        _ = machine.handle(.downloaded(id: id, received: length))
        return machine.handle(.ended(id: id, succeeded: true))
    }

    @Test("ten requests, five at once and then one at a time after the queue finished: the totals of all ten")
    func addedWhileInProgress() {
        var machine = Machine()
        machine.showAccurateProgress = true
        _ = machine.handle(.setSuspended(false))
        for id in 1...5 { _ = machine.handle(.add(id: id, host: "a", uploadShare: 100)) }
        for id in 1...5 { _ = Self.download(&machine, id, length: 1_000) }
        #expect(machine.requestsCount == 0)
        for id in 6...10 {
            #expect(machine.handle(.add(id: id, host: "a", uploadShare: 100)) == [.start(id: id)])
            #expect(Self.download(&machine, id, length: 1_000) == [.queueFinished])
        }
        #expect(machine.totalBytesToDownload == 10_000)
        #expect(machine.bytesDownloadedSoFar == 10_000)
        #expect(machine.totalUploadUnits == 1_000)
        #expect(machine.uploadUnitsDone == 1_000)
        #expect(machine.downloadUnitsDone == machine.totalDownloadUnits)
    }

    @Test("reset on an idle queue starts the totals again at once")
    func resetIdle() {
        var machine = Machine()
        _ = machine.handle(.setSuspended(false))
        _ = machine.handle(.add(id: 1, host: "a", uploadShare: 1))
        _ = machine.handle(.ended(id: 1, succeeded: true))
        #expect(machine.handle(.reset).isEmpty)
        #expect(machine.totalUploadUnits == 0)
        #expect(machine.totalBytesToDownload == 0)
        _ = machine.handle(.add(id: 2, host: "a", uploadShare: 1))
        #expect(machine.totalUploadUnits == 1)
    }

    @Test("reset while requests run: they are cancelled; once they have ended the totals are zero and the next request counts from zero")
    func resetWhileRunning() {
        var machine = Machine()
        _ = machine.handle(.setMaxConcurrent(1))
        _ = machine.handle(.setSuspended(false))
        _ = machine.handle(.add(id: 1, host: "a", uploadShare: 1))
        _ = machine.handle(.add(id: 2, host: "a", uploadShare: 1))
        #expect(machine.handle(.reset) == [.failUnstarted(id: 2), .cancelRunning(id: 1)])
        _ = machine.handle(.ended(id: 2, succeeded: false))
        #expect(machine.handle(.ended(id: 1, succeeded: false)) == [.queueFinished])
        #expect(machine.totalUploadUnits == 0)
        #expect(machine.uploadUnitsDone == 0)
        _ = machine.handle(.add(id: 3, host: "a", uploadShare: 1))
        #expect(machine.totalUploadUnits == 1)
        #expect(machine.uploadUnitsDone == 0)
    }

    @Test("a queue reset: the counters read zero and its progress 0.0 (no trap on Linux), then a new request counts from zero")
    func queueReset() async {
        let queue = NetworkQueue()
        for _ in 0..<2 { try? queue.addOperation(FormDataRequest(url: URL(string: "http://127.0.0.1:9/held")!)) }
        #expect(queue.totalBytesToUpload == 2)
        queue.reset()  // both fail unstarted: nothing is sent
        await TransportTestSupport.blocking { queue.waitUntilAllOperationsAreFinished() }
        #expect(queue.totalBytesToUpload == 0)
        #expect(queue.bytesUploadedSoFar == 0)
        #expect(queue.uploadProgress.fractionCompleted == 0)
        #expect(queue.downloadProgress.fractionCompleted == 0)
        try? queue.addOperation(FormDataRequest(url: URL(string: "http://127.0.0.1:9/next")!))
        #expect(queue.totalBytesToUpload == 1)
        #expect(queue.uploadProgress.totalUnitCount == 1)
        queue.reset()
    }
}
