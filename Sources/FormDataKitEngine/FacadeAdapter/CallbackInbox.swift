import Foundation

/// Callbacks handed to a thread that waits for them: what `FormDataRequest/startSynchronous()`
/// uses when it is called on the request's own callback queue (the main queue, typically), which
/// it would otherwise block while the callbacks wait for that queue.
package final class CallbackInbox: @unchecked Sendable {
    // `@unchecked`: `pending` and `closed` are touched only under `condition`.
    private let condition = NSCondition()
    private var pending: [@Sendable () -> Void] = []
    private var closed = false

    /// An inbox nobody waits on yet.
    package init() {}

    /// Queues `work` for the waiting thread.
    package func post(_ work: @escaping @Sendable () -> Void) {
        condition.withLock {
            pending.append(work)
            condition.signal()
        }
    }

    /// No more work will come (after the work already posted).
    package func close() {
        condition.withLock {
            closed = true
            condition.signal()
        }
    }

    /// Runs the posted work on the calling thread, in order, until `close()` and all of it ran.
    package func runUntilClosed() {
        while true {
            let batch: [@Sendable () -> Void]? = condition.withLock {
                while pending.isEmpty && !closed { condition.wait() }
                if pending.isEmpty { return nil }
                defer { pending = [] }
                return pending
            }
            guard let batch else { return }
            for work in batch { work() }
        }
    }

    // MARK: - Which queue is current

    private static let marker = DispatchSpecificKey<ObjectIdentifier>()

    /// Marks `queue`, so `isCurrent(_:)` can tell when code runs on it.
    package static func mark(_ queue: DispatchQueue) {
        queue.setSpecific(key: marker, value: ObjectIdentifier(queue))
    }

    /// Whether the calling code runs on `queue` (marked with `mark(_:)`).
    package static func isCurrent(_ queue: DispatchQueue) -> Bool {
        DispatchQueue.getSpecific(key: marker) == ObjectIdentifier(queue)
    }

    /// The main queue, marked once.
    package static let markedMainQueue: DispatchQueue = {
        mark(DispatchQueue.main)
        return DispatchQueue.main
    }()
}
