/// What a ``NetworkQueue`` decides, as a value: which request starts next (within the queue's
/// and the per-host limits, not while suspended), when the rest are cancelled after a failure,
/// when the queue has finished, and how far the batch's upload and download progress has come.
/// Events in, actions out; no socket, thread or clock — tested on its own.
struct NetworkQueueStateMachine: Sendable {
    /// What the queue tells the machine.
    enum Event: Sendable, Equatable {
        /// A request joined the queue: `host` for the per-host limit, `uploadShare` its weight in
        /// the upload progress (its exact body length with accurate progress, else 1), `priority`
        /// its ``FormDataRequest/queuePriority`` (higher waiting requests start first).
        case add(id: Int, host: String, uploadShare: UInt64, priority: Int = 0)
        /// ``NetworkQueue/isSuspended`` changed (``NetworkQueue/go()`` sets false).
        case setSuspended(Bool)
        /// ``NetworkQueue/maxConcurrentOperationCount`` changed.
        case setMaxConcurrent(Int)
        /// ``NetworkQueue/maximumConcurrentRequestsPerHost`` changed (0: no limit).
        case setPerHostLimit(Int)
        /// A running request's current attempt has sent `sent` bytes of its `length`-byte body.
        case uploaded(id: Int, sent: UInt64, length: UInt64)
        /// A running request's response head arrived (`expectedLength`: its Content-Length).
        case responseHead(id: Int, expectedLength: UInt64?)
        /// A running request's current response has brought `received` body bytes so far.
        case downloaded(id: Int, received: UInt64)
        /// A request's send ended (after its own delegate and blocks were called).
        case ended(id: Int, succeeded: Bool)
        /// ``NetworkQueue/cancelAllOperations()``.
        case cancelAll
        /// ``NetworkQueue/reset()``: cancels all; the totals start again from zero, now or once the
        /// cancelled requests have ended.
        case reset
        /// The request's own cancel while it waits in the queue.
        case cancelWaiting(id: Int)
    }

    /// What the queue must do, in order.
    enum Action: Sendable, Equatable {
        /// Send this request now.
        case start(id: Int)
        /// Fail this request that never started with the cancelled error (its callbacks run).
        case failUnstarted(id: Int)
        /// Cancel this running request.
        case cancelRunning(id: Int)
        /// Every request added has ended: tell the delegate `queueFinished`.
        case queueFinished
    }

    /// One request of the batch and its share of the progress.
    private struct Entry: Sendable {
        var host: String
        var uploadShare: UInt64
        var priority = 0
        /// The share of ``uploadShare`` reached (high-water: a retry sending again adds nothing).
        var uploadDone: UInt64 = 0
        /// The most body bytes counted for one response (a retry's response adds only beyond it).
        var downloadedCounted: UInt64 = 0
        var expectedDownload: UInt64?
        var downloadUnitsDone: UInt64 = 0
        var running = false
        /// Whether the queue already cancelled it (a second cancel-all leaves it alone).
        var cancelled = false
    }

    /// The weight of one request in the download progress (its own fraction, scaled).
    static let downloadUnitsPerRequest: UInt64 = 1_000

    private(set) var isSuspended = true
    private(set) var maxConcurrent = 4
    private(set) var perHostLimit = 0
    /// Whether the first failure cancels the rest (ASI's default).
    var shouldCancelAllRequestsOnFailure = true
    /// Whether shares are body lengths (false: each request counts 1 upload unit).
    var showAccurateProgress = false

    private var entries: [Int: Entry] = [:]
    /// Requests waiting to start: higher priority first, then in the order they were added.
    private var waiting: [Int] = []
    private var waitingHead = 0
    private var runningCount = 0
    private var runningPerHost: [String: Int] = [:]
    /// Set by a reset while requests run: the totals start again once they have ended.
    private var totalsRestart = false

    /// Requests added and not ended (ASI's `requestsCount`).
    private(set) var requestsCount = 0
    /// ASI's `totalBytesToUpload` and `bytesUploadedSoFar` for the current batch.
    private(set) var totalUploadUnits: UInt64 = 0
    private(set) var uploadUnitsDone: UInt64 = 0
    /// ASI's `totalBytesToDownload` and `bytesDownloadedSoFar` (bytes; units without accurate progress).
    private(set) var totalBytesToDownload: UInt64 = 0
    private(set) var bytesDownloadedSoFar: UInt64 = 0
    /// The download progress in ``downloadUnitsPerRequest`` units per request.
    private(set) var totalDownloadUnits: UInt64 = 0
    private(set) var downloadUnitsDone: UInt64 = 0

    /// Requests waiting to start.
    var waitingCount: Int { waiting.count - waitingHead }
    /// Requests running.
    var running: Int { runningCount }
    /// Whether the queue cancelled running request `id` (checked again once a start claimed its send).
    func isCancelled(_ id: Int) -> Bool { entries[id]?.cancelled == true }

    /// Feeds `event`; returns what to do.
    /// - Parameter event: what happened.
    /// - Returns: the actions, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .add(let id, let host, let share, let priority):
            requestsCount += 1
            entries[id] = Entry(host: host, uploadShare: share, priority: priority)
            totalUploadUnits += share
            totalDownloadUnits += Self.downloadUnitsPerRequest
            if !showAccurateProgress { totalBytesToDownload += 1 }
            // After every waiting request of its priority or higher (equal priorities: appended).
            var index = waiting.count
            while index > waitingHead, (entries[waiting[index - 1]]?.priority ?? .max) < priority { index -= 1 }
            waiting.insert(id, at: index)
            return schedule()
        case .setSuspended(let suspended):
            isSuspended = suspended
            return schedule()
        case .setMaxConcurrent(let count):
            maxConcurrent = count < 0 ? 4 : count
            return schedule()
        case .setPerHostLimit(let limit):
            perHostLimit = max(0, limit)
            return schedule()
        case .uploaded(let id, let sent, let length):
            guard var entry = entries[id], entry.running else { return [] }
            let reached = length == 0 ? 0 : UInt64((Double(min(sent, length)) / Double(length)) * Double(entry.uploadShare))
            // Without accurate progress a request's one unit counts when it ends.
            if showAccurateProgress, reached > entry.uploadDone, reached <= entry.uploadShare {
                uploadUnitsDone += reached - entry.uploadDone
                entry.uploadDone = reached
                entries[id] = entry
            }
            return []
        case .responseHead(let id, let expected):
            guard var entry = entries[id], entry.running else { return [] }
            if showAccurateProgress, let expected, entry.expectedDownload == nil {
                totalBytesToDownload += expected
            }
            entry.expectedDownload = expected ?? entry.expectedDownload
            entries[id] = entry
            return []
        case .downloaded(let id, let received):
            guard var entry = entries[id], entry.running else { return [] }
            if showAccurateProgress, received > entry.downloadedCounted {
                bytesDownloadedSoFar += received - entry.downloadedCounted
                entry.downloadedCounted = received
            }
            if let expected = entry.expectedDownload, expected > 0 {
                let units = Self.downloadUnitsPerRequest * min(received, expected) / expected
                if units > entry.downloadUnitsDone {
                    downloadUnitsDone += units - entry.downloadUnitsDone
                    entry.downloadUnitsDone = units
                }
            }
            entries[id] = entry
            return []
        case .ended(let id, let succeeded):
            return ended(id, succeeded: succeeded)
        case .cancelAll:
            return cancelAll()
        case .reset:
            totalsRestart = true
            let actions = cancelAll()
            if requestsCount == 0 { startBatch() }
            return actions
        case .cancelWaiting(let id):
            guard entries[id] != nil, let index = waiting[waitingHead...].firstIndex(of: id) else { return [] }
            waiting.remove(at: index)
            return [.failUnstarted(id: id)]
        }
    }

    /// The totals and progress start again from zero (after a reset only: as in ASI, requests
    /// added to a queue that finished add to its totals).
    private mutating func startBatch() {
        totalsRestart = false
        totalUploadUnits = 0
        uploadUnitsDone = 0
        totalBytesToDownload = 0
        bytesDownloadedSoFar = 0
        totalDownloadUnits = 0
        downloadUnitsDone = 0
    }

    private mutating func ended(_ id: Int, succeeded: Bool) -> [Action] {
        guard var entry = entries.removeValue(forKey: id) else { return [] }
        if entry.running {
            runningCount -= 1
            runningPerHost[entry.host, default: 1] -= 1
            if runningPerHost[entry.host] == 0 { runningPerHost[entry.host] = nil }
        } else if let index = waiting[waitingHead...].firstIndex(of: id) {
            waiting.remove(at: index)
        }
        // Whatever the outcome, the request's share is done: the bar ends at exactly 1.0.
        uploadUnitsDone += entry.uploadShare - entry.uploadDone
        entry.uploadDone = entry.uploadShare
        downloadUnitsDone += Self.downloadUnitsPerRequest - entry.downloadUnitsDone
        if !showAccurateProgress { bytesDownloadedSoFar += 1 }
        requestsCount -= 1
        if requestsCount == 0, totalsRestart { startBatch() }
        var actions: [Action] = []
        if requestsCount == 0 { actions.append(.queueFinished) }
        if !succeeded, shouldCancelAllRequestsOnFailure, requestsCount > 0 { actions += cancelAll() }
        return actions + schedule()
    }

    /// Every waiting request fails unstarted, every running one is cancelled; each still ends
    /// through ``Event/ended(id:succeeded:)``.
    private mutating func cancelAll() -> [Action] {
        var actions: [Action] = waiting[waitingHead...].map { .failUnstarted(id: $0) }
        waiting = []
        waitingHead = 0
        for id in entries.filter({ $0.value.running && !$0.value.cancelled }).keys.sorted() {
            entries[id]?.cancelled = true
            actions.append(.cancelRunning(id: id))
        }
        return actions
    }

    /// Starts waiting requests while the limits allow, first added first, skipping those whose
    /// host is at its limit.
    private mutating func schedule() -> [Action] {
        guard !isSuspended else { return [] }
        var actions: [Action] = []
        var index = waitingHead
        while runningCount < maxConcurrent, index < waiting.count {
            let id = waiting[index]
            guard var entry = entries[id] else {
                index += 1
                continue
            }
            if perHostLimit > 0, runningPerHost[entry.host, default: 0] >= perHostLimit {
                index += 1
                continue
            }
            if index == waitingHead {
                waitingHead += 1
                index += 1
            } else {
                // Skipped ones stay before it, in order.
                waiting.remove(at: index)
            }
            entry.running = true
            entries[id] = entry
            runningCount += 1
            runningPerHost[entry.host, default: 0] += 1
            actions.append(.start(id: id))
        }
        // Drop the consumed head now and then so the array does not keep every id ever added.
        if waitingHead > 1024, waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
        return actions
    }
}
