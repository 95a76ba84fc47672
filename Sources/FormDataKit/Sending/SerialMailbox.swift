import Foundation

/// Runs one send's callbacks in the order they were posted, one at a time, on the shared global
/// queue: no queue or thread is made per send. Whoever posts to an idle mailbox schedules one
/// drain; posts that come while it drains join it.
final class SerialMailbox: @unchecked Sendable {
    // `@unchecked`: `items` and `draining` are touched only under `lock`.
    private let lock = NSLock()
    private var items: [@Sendable () -> Void] = []
    private var draining = false

    /// Queues `item` after everything posted before it.
    /// - Parameter item: the work.
    func post(_ item: @escaping @Sendable () -> Void) {
        let schedule = lock.withLock { () -> Bool in
            items.append(item)
            guard !draining else { return false }
            draining = true
            return true
        }
        if schedule { DispatchQueue.global().async { self.drain() } }
    }

    private func drain() {
        while true {
            let batch = lock.withLock { () -> [@Sendable () -> Void]? in
                guard !items.isEmpty else {
                    draining = false
                    return nil
                }
                defer { items = [] }
                return items
            }
            guard let batch else { return }
            for item in batch { item() }
        }
    }
}

/// Body-progress deltas gathered into one callback while it waits in a ``SerialMailbox``: a
/// transport may report every few kilobytes, the callbacks run once per batch.
final class ProgressBatch: @unchecked Sendable {
    // `@unchecked`: `delta` and `closed` are touched only under `lock`.
    private let lock = NSLock()
    private var delta: Int64
    private var closed = false

    init(_ delta: Int64) { self.delta = delta }

    /// Adds `more` unless the batch was already taken; false when it was (start a new one).
    func add(_ more: Int64) -> Bool {
        lock.withLock {
            guard !closed else { return false }
            delta += more
            return true
        }
    }

    /// The gathered delta; the batch takes no more after this.
    func take() -> Int64 {
        lock.withLock {
            closed = true
            return delta
        }
    }
}

/// The one timer queue of the process: every send's idle clock is a deadline on it.
enum SendTimer {
    private static let queue = DispatchQueue(label: "FormDataKit.SendTimer")

    /// Monotonic nanoseconds now (the clock deadlines are given in).
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `work` at `deadline` (monotonic nanoseconds) on the timer queue.
    /// - Parameters:
    ///   - deadline: when, in ``now``'s clock.
    ///   - work: what to run; it returns quickly.
    static func schedule(at deadline: UInt64, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline), execute: work)
    }
}
