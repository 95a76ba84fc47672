@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Testing

@testable import FormDataKit

/// The queue's scheduling and progress, event by event: no sockets, threads or clock.
@Suite("NetworkQueueStateMachine")
struct NetworkQueueStateMachineTests {
    typealias Machine = NetworkQueueStateMachine

    static func machine(adding count: Int, host: (Int) -> String = { _ in "a" }, share: (Int) -> UInt64 = { _ in 1 }) -> (
        Machine, [Machine.Action]
    ) {
        var machine = Machine()
        var actions: [Machine.Action] = []
        for id in 1...count { actions += machine.handle(.add(id: id, host: host(id), uploadShare: share(id))) }
        return (machine, actions)
    }

    @Test("a new queue is suspended; go starts 4 (ASI's default); an ended request makes room for the next")
    func suspendedThenFourAtATime() {
        var (machine, added) = Self.machine(adding: 6)
        #expect(added.isEmpty)
        #expect(machine.isSuspended)
        #expect(machine.handle(.setSuspended(false)) == (1...4).map { .start(id: $0) })
        #expect(machine.handle(.ended(id: 2, succeeded: true)) == [.start(id: 5)])
        #expect(machine.handle(.ended(id: 1, succeeded: true)) == [.start(id: 6)])
        #expect(machine.requestsCount == 4)
        #expect(machine.handle(.setSuspended(true)).isEmpty)
        for id in [3, 4, 5] { #expect(machine.handle(.ended(id: id, succeeded: true)).isEmpty) }
        #expect(machine.handle(.ended(id: 6, succeeded: true)) == [.queueFinished])
        #expect(machine.requestsCount == 0)
    }

    @Test("a request added while the queue runs is picked up; raising the limit starts more at once")
    func addedWhileRunning() {
        var (machine, _) = Self.machine(adding: 1)
        _ = machine.handle(.setMaxConcurrent(1))
        #expect(machine.handle(.setSuspended(false)) == [.start(id: 1)])
        #expect(machine.handle(.add(id: 2, host: "a", uploadShare: 1)).isEmpty)
        #expect(machine.handle(.add(id: 3, host: "a", uploadShare: 1)).isEmpty)
        #expect(machine.handle(.setMaxConcurrent(3)) == [.start(id: 2), .start(id: 3)])
        #expect(machine.handle(.add(id: 4, host: "a", uploadShare: 1)).isEmpty)
        #expect(machine.handle(.ended(id: 1, succeeded: true)) == [.start(id: 4)])
    }

    @Test("0 holds every request; a negative count means the default 4")
    func limits() {
        var (machine, _) = Self.machine(adding: 5)
        _ = machine.handle(.setMaxConcurrent(0))
        #expect(machine.handle(.setSuspended(false)).isEmpty)
        #expect(machine.handle(.setMaxConcurrent(-1)) == (1...4).map { .start(id: $0) })
        #expect(machine.maxConcurrent == 4)
    }

    @Test("the per-host limit: a host at its limit waits while later requests to other hosts start")
    func perHostLimit() {
        var (machine, _) = Self.machine(adding: 5, host: { $0 <= 3 ? "a" : "b" })
        _ = machine.handle(.setPerHostLimit(1))
        #expect(machine.handle(.setSuspended(false)) == [.start(id: 1), .start(id: 4)])
        #expect(machine.handle(.ended(id: 4, succeeded: true)) == [.start(id: 5)])
        #expect(machine.handle(.ended(id: 1, succeeded: true)) == [.start(id: 2)])
        #expect(machine.running == 2)
    }

    @Test("the first failure cancels the rest: waiting ones fail unstarted, running ones are cancelled; queueFinished once")
    func cancelOnFailure() {
        var (machine, _) = Self.machine(adding: 6)
        _ = machine.handle(.setSuspended(false))
        let actions = machine.handle(.ended(id: 1, succeeded: false))
        #expect(
            actions == [.failUnstarted(id: 5), .failUnstarted(id: 6), .cancelRunning(id: 2), .cancelRunning(id: 3), .cancelRunning(id: 4)])
        // The cancelled requests fail in turn: no second round of cancels, nothing starts.
        for id in [2, 3, 4, 5] { #expect(machine.handle(.ended(id: id, succeeded: false)).isEmpty) }
        #expect(machine.handle(.ended(id: 6, succeeded: false)) == [.queueFinished])
    }

    @Test("with shouldCancelAllRequestsOnFailure off, a failure just makes room for the next")
    func failureWithoutCancel() {
        var (machine, _) = Self.machine(adding: 5)
        machine.shouldCancelAllRequestsOnFailure = false
        _ = machine.handle(.setSuspended(false))
        #expect(machine.handle(.ended(id: 1, succeeded: false)) == [.start(id: 5)])
    }

    @Test("a waiting request's own cancel fails it unstarted; as in ASI that failure cancels the rest unless switched off")
    func cancelWaiting() {
        var (machine, _) = Self.machine(adding: 2)
        _ = machine.handle(.setMaxConcurrent(1))
        #expect(machine.handle(.cancelWaiting(id: 2)) == [.failUnstarted(id: 2)])
        #expect(machine.handle(.setSuspended(false)) == [.start(id: 1)])
        #expect(machine.handle(.ended(id: 2, succeeded: false)) == [.cancelRunning(id: 1)])
        #expect(machine.handle(.ended(id: 1, succeeded: false)) == [.queueFinished])
        var (tolerant, _) = Self.machine(adding: 2)
        tolerant.shouldCancelAllRequestsOnFailure = false
        _ = tolerant.handle(.setMaxConcurrent(1))
        #expect(tolerant.handle(.cancelWaiting(id: 2)) == [.failUnstarted(id: 2)])
        #expect(tolerant.handle(.setSuspended(false)) == [.start(id: 1)])
        #expect(tolerant.handle(.ended(id: 2, succeeded: false)).isEmpty)
        #expect(tolerant.handle(.ended(id: 1, succeeded: true)) == [.queueFinished])
        // A running request is not "waiting": its cancel goes to its send.
        var (running, _) = Self.machine(adding: 1)
        _ = running.handle(.setSuspended(false))
        #expect(running.handle(.cancelWaiting(id: 1)).isEmpty)
    }

    @Test("accurate upload progress: bytes, a retry adds nothing, each share completes at its end, exactly the total")
    func accurateUploadProgress() {
        var machine = Machine()
        machine.showAccurateProgress = true
        _ = machine.handle(.add(id: 1, host: "a", uploadShare: 100))
        _ = machine.handle(.add(id: 2, host: "a", uploadShare: 300))
        _ = machine.handle(.setSuspended(false))
        #expect(machine.totalUploadUnits == 400)
        _ = machine.handle(.uploaded(id: 1, sent: 50, length: 100))
        #expect(machine.uploadUnitsDone == 50)
        // A retry starts the body again: the bar does not move back, nor count the bytes twice.
        _ = machine.handle(.uploaded(id: 1, sent: 0, length: 100))
        _ = machine.handle(.uploaded(id: 1, sent: 60, length: 100))
        #expect(machine.uploadUnitsDone == 60)
        _ = machine.handle(.uploaded(id: 2, sent: 300, length: 300))
        _ = machine.handle(.ended(id: 1, succeeded: false))
        #expect(machine.uploadUnitsDone == 400)
        #expect(machine.totalUploadUnits == 400)
    }

    @Test("a compressed body's bytes are scaled to the share counted when it was added")
    func compressedShareScaled() {
        var machine = Machine()
        machine.showAccurateProgress = true
        _ = machine.handle(.add(id: 1, host: "a", uploadShare: 1000))
        _ = machine.handle(.setSuspended(false))
        _ = machine.handle(.uploaded(id: 1, sent: 250, length: 500))
        #expect(machine.uploadUnitsDone == 500)
        _ = machine.handle(.uploaded(id: 1, sent: 9999, length: 500))
        #expect(machine.uploadUnitsDone == 1000)
    }

    @Test("without accurate progress each request is one unit, counted when it ends")
    func unitProgress() {
        var (machine, _) = Self.machine(adding: 3)
        _ = machine.handle(.setSuspended(false))
        _ = machine.handle(.uploaded(id: 1, sent: 10, length: 20))
        #expect(machine.uploadUnitsDone == 0)
        _ = machine.handle(.ended(id: 1, succeeded: true))
        #expect(machine.uploadUnitsDone == 1)
        #expect(machine.totalUploadUnits == 3)
        #expect(machine.bytesDownloadedSoFar == 1)
        #expect(machine.totalBytesToDownload == 3)
    }

    @Test("download: bytes against the Content-Lengths; each request's share of the bar follows its own fraction")
    func downloadProgress() {
        var machine = Machine()
        machine.showAccurateProgress = true
        _ = machine.handle(.add(id: 1, host: "a", uploadShare: 1))
        _ = machine.handle(.add(id: 2, host: "a", uploadShare: 1))
        _ = machine.handle(.setSuspended(false))
        _ = machine.handle(.responseHead(id: 1, expectedLength: 200))
        _ = machine.handle(.downloaded(id: 1, received: 100))
        #expect(machine.totalBytesToDownload == 200)
        #expect(machine.bytesDownloadedSoFar == 100)
        #expect(machine.downloadUnitsDone == Machine.downloadUnitsPerRequest / 2)
        #expect(machine.totalDownloadUnits == 2 * Machine.downloadUnitsPerRequest)
        _ = machine.handle(.ended(id: 1, succeeded: true))
        _ = machine.handle(.ended(id: 2, succeeded: true))
        #expect(machine.downloadUnitsDone == machine.totalDownloadUnits)
    }

    @Test("requests added after the queue finished add to its totals (ASI's); after a reset they start from zero")
    func newBatch() {
        var (machine, _) = Self.machine(adding: 2)
        _ = machine.handle(.setSuspended(false))
        _ = machine.handle(.ended(id: 1, succeeded: true))
        #expect(machine.handle(.ended(id: 2, succeeded: true)) == [.queueFinished])
        #expect(machine.handle(.add(id: 3, host: "a", uploadShare: 1)) == [.start(id: 3)])
        #expect(machine.totalUploadUnits == 3)
        #expect(machine.uploadUnitsDone == 2)
        #expect(machine.handle(.ended(id: 3, succeeded: true)) == [.queueFinished])
        _ = machine.handle(.reset)
        _ = machine.handle(.setSuspended(false))
        #expect(machine.handle(.add(id: 4, host: "a", uploadShare: 1)) == [.start(id: 4)])
        #expect(machine.totalUploadUnits == 1)
        #expect(machine.uploadUnitsDone == 0)
    }

    @Test("cancelAll: every waiting request fails unstarted, every running one is cancelled, in order")
    func cancelAll() {
        var (machine, _) = Self.machine(adding: 3)
        _ = machine.handle(.setMaxConcurrent(1))
        _ = machine.handle(.setSuspended(false))
        #expect(machine.handle(.cancelAll) == [.failUnstarted(id: 2), .failUnstarted(id: 3), .cancelRunning(id: 1)])
        #expect(machine.waitingCount == 0)
    }

    @Test("10,000 waiting requests start in order, one as each ends")
    func manyWaiting() {
        var (machine, _) = Self.machine(adding: 10_000)
        var started = machine.handle(.setSuspended(false)).count
        var id = 1
        while machine.requestsCount > 0 {
            started += machine.handle(.ended(id: id, succeeded: true)).filter { if case .start = $0 { true } else { false } }.count
            id += 1
        }
        #expect(started == 10_000)
        #expect(machine.uploadUnitsDone == 10_000)
    }
}
