#if os(Linux)
import FormDataKitWire
import CFileSpace
#endif
import Foundation

/// The process's few threads that read bodies from disk, so a transport's own thread (the curl
/// transport's event loop) never opens or reads a file.
///
/// Two workers take jobs in the order they were queued. A file system can block a read for
/// a long time (a hung NFS server; a FIFO cannot get here: it is refused before it is opened).
/// A worker stuck in one job must not starve every other send, so a supervisor thread, awake
/// only while jobs wait and no worker is free, counts a worker busy with one job for longer than
/// ``stallThreshold`` as stalled and starts a replacement while fewer than ``baseWorkers`` are
/// moving, up to ``maximumWorkers`` threads in all. A stalled worker is abandoned to finish its
/// read (a thread blocked in the kernel cannot be interrupted); workers beyond the base count
/// end after idling for ``idleExit``. So the process has 3 reader threads (two workers and the
/// supervisor) whatever the number of sends, and at most ``maximumWorkers`` + 1 while reads
/// hang; when every worker is stuck, reads wait for one to return.
package final class BodyReaderPool: @unchecked Sendable {
    // `@unchecked`: every stored variable is guarded by `state`'s lock; `wake` guards `wakePending`.

    /// The pool every ``BodyReadAhead`` uses unless told otherwise.
    package static let shared = BodyReaderPool()

    /// Workers kept moving: a stalled one is replaced while there are fewer than this.
    let baseWorkers: Int
    /// The most worker threads at once (stalled ones included).
    let maximumWorkers: Int
    /// How long one job may run before its worker counts as stalled.
    let stallThreshold: TimeInterval
    /// How long a worker beyond the base count idles before it ends.
    let idleExit: TimeInterval

    private let state = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var nextJob = 0
    /// When each busy worker started its current job (monotonic nanoseconds), by worker number.
    private var busySince: [Int: UInt64] = [:]
    private var workerCount = 0
    private var idleWorkers = 0
    private var workersStarted = 0
    private var supervisorStarted = false
    /// Whether the supervisor is already checking (then a new job needs no wake-up).
    private var supervisorWatching = false

    /// Wakes the supervisor (its own lock, so it never competes with workers for a signal).
    private let wake = NSCondition()
    private var wakePending = false

    /// A pool of `baseWorkers` workers, growing to `maximumWorkers` while workers are stalled.
    init(baseWorkers: Int = 2, maximumWorkers: Int = 8, stallThreshold: TimeInterval = 0.25, idleExit: TimeInterval = 5) {
        self.baseWorkers = max(1, baseWorkers)
        self.maximumWorkers = max(self.baseWorkers, maximumWorkers)
        self.stallThreshold = stallThreshold
        self.idleExit = idleExit
    }

    /// The worker threads now (for tests and diagnostics).
    var workerThreads: Int { state.withLock { workerCount } }

    /// Queues `job` to run on a worker. Never blocks.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        var startWorker = false
        var wakeSupervisor = false
        state.withLock {
            jobs.append(job)
            if idleWorkers > 0 {
                state.signal()
            } else if workerCount < baseWorkers {
                workerCount += 1
                startWorker = true
            } else if !supervisorWatching {
                supervisorWatching = true
                wakeSupervisor = true
            }
        }
        if startWorker { spawnWorker() }
        if wakeSupervisor { wakeTheSupervisor() }
    }

    // MARK: - Workers

    private func spawnWorker() {
        let number = state.withLock { () -> Int in
            workersStarted += 1
            return workersStarted
        }
        Thread.detachNewThread { [self] in
            // Named from the thread itself, so the system sees it (ps, /proc/…/comm; at most 15 bytes).
            ThreadName.setCurrent("FDK.BodyReader")
            // Background work: a worker woken by the transport's thread (a chunk copied out)
            // does not preempt it, on a machine with as few cores as threads busy.
            #if os(Linux)
            _ = cfilespace_prefer_throughput()
            #endif
            work(number)
        }
    }

    private func work(_ number: Int) {
        state.lock()
        while true {
            while pendingJobs == 0 {
                idleWorkers += 1
                let signalled: Bool
                if workerCount > baseWorkers {
                    signalled = state.wait(until: Date(timeIntervalSinceNow: idleExit))
                } else {
                    state.wait()
                    signalled = true
                }
                idleWorkers -= 1
                if !signalled && pendingJobs == 0 && workerCount > baseWorkers {
                    workerCount -= 1
                    state.unlock()
                    return
                }
            }
            let job = takeJob()
            busySince[number] = DispatchTime.now().uptimeNanoseconds
            state.unlock()
            job()
            state.lock()
            busySince[number] = nil
        }
    }

    private var pendingJobs: Int { jobs.count - nextJob }

    /// The oldest queued job (under the lock); the queue's storage is compacted now and then.
    private func takeJob() -> @Sendable () -> Void {
        let job = jobs[nextJob]
        nextJob += 1
        if nextJob == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            nextJob = 0
        } else if nextJob >= 64 && nextJob * 2 >= jobs.count {
            jobs.removeFirst(nextJob)
            nextJob = 0
        }
        return job
    }

    // MARK: - Supervisor

    private func wakeTheSupervisor() {
        let start = state.withLock { () -> Bool in
            defer { supervisorStarted = true }
            return !supervisorStarted
        }
        if start {
            Thread.detachNewThread { [self] in
                ThreadName.setCurrent("FDK.ReaderSuper")
                supervise()
            }
        }
        wake.withLock {
            wakePending = true
            wake.signal()
        }
    }

    /// Sleeps until jobs wait with no worker free; then, as long as that lasts, replaces
    /// workers that have been in one job for longer than the stall threshold.
    private func supervise() {
        while true {
            wake.withLock {
                while !wakePending { wake.wait() }
                wakePending = false
            }
            while let nextCheck = replaceStalledWorkers() {
                wake.withLock {
                    if !wakePending { _ = wake.wait(until: nextCheck) }
                    wakePending = false
                }
            }
        }
    }

    /// Starts a worker when jobs wait, none is free and fewer than the base count are moving.
    /// Returns when to look again, or nil when nothing waits.
    private func replaceStalledWorkers() -> Date? {
        let threshold = UInt64(stallThreshold * 1e9)
        let (spawn, nextCheck) = state.withLock { () -> (Bool, Date?) in
            guard pendingJobs > 0, idleWorkers == 0 else {
                supervisorWatching = false
                return (false, nil)
            }
            let now = DispatchTime.now().uptimeNanoseconds
            let stalled = busySince.values.filter { now &- $0 >= threshold }.count
            if workerCount - stalled < baseWorkers && workerCount < maximumWorkers {
                workerCount += 1
                return (true, Date())
            }
            // The next moment a busy worker would count as stalled.
            let soonest = busySince.values.map { $0 + threshold }.filter { $0 > now }.min() ?? (now + threshold)
            return (false, Date(timeIntervalSinceNow: Double(soonest - now) / 1e9))
        }
        if spawn { spawnWorker() }
        return nextCheck
    }
}
