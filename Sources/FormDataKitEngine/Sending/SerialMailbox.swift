import FormDataKitBody
import FormDataKitWire
import Foundation

/// Runs one send's callbacks in the order they were posted, one at a time: no queue or thread is
/// made per send. Whoever posts to an idle mailbox (``post(_:)``) schedules one drain on the
/// shared global queue, and posts that come while it drains join it (for user code: never a
/// transport's thread); ``runHereIfIdle(_:)`` runs a cheap last step on the poster's thread when
/// nothing waits. (The send driver's own events to its façade go through its
/// ``SendDriverOutbox``, values under the driver's lock.)
final class SerialMailbox: @unchecked Sendable {
    // `@unchecked`: `items` and `draining` are touched only under `lock`.
    private let lock = Locked()
    /// What waits to run. A drain swaps it with the emptied storage of the batch it ran, so the
    /// storage stays here for the next items (a send's events drain one or two at a time:
    /// without it every drain would allocate the array anew).
    private var items: [@Sendable () -> Void] = []
    private var draining = false

    /// An empty mailbox.
    init() {}

    /// Queues `item` after everything posted before it; the shared global queue runs them.
    /// - Parameter item: the work.
    func post(_ item: @escaping @Sendable () -> Void) {
        if enqueue(item) { DispatchQueue.sharedGlobal.async { self.drainHere() } }
    }

    /// Queues `item`; true when the caller has claimed the drain and must schedule ``drainHere()``.
    private func enqueue(_ item: @escaping @Sendable () -> Void) -> Bool {
        lock.withLock { () -> Bool in
            items.append(item)
            guard !draining else { return false }
            draining = true
            return true
        }
    }

    /// Runs `item` on this thread when nothing is queued or running, else queues it for the
    /// global queue: a cheap last step (a semaphore, a continuation) skips a thread hop.
    /// - Parameter item: the work.
    func runHereIfIdle(_ item: @escaping @Sendable () -> Void) {
        let idle = lock.withLock { () -> Bool in
            guard !draining, items.isEmpty else { return false }
            draining = true
            return true
        }
        guard idle else { return post(item) }
        item()
        let more = lock.withLock { () -> Bool in
            if items.isEmpty { draining = false }
            return !items.isEmpty
        }
        if more { DispatchQueue.sharedGlobal.async { self.drainHere() } }
    }

    /// Runs the queued items, and those queued meanwhile, on this thread (the drain's claimant).
    private func drainHere() {
        var batch: [@Sendable () -> Void] = []
        while true {
            lock.withLock {
                swap(&batch, &items)
                if batch.isEmpty { draining = false }
            }
            if batch.isEmpty { return }
            for item in batch { item() }
            // Outside the lock: releasing an item may run a deinit that posts here.
            batch.removeAll(keepingCapacity: true)
        }
    }
}
