import Foundation

/// The threads the receiver's request handlers run on. A handler blocks (it reads the body as it
/// arrives and may take its time), so every request being handled needs a thread of its own; a
/// thread that finished one is reused for the next instead of a new one made per request, and
/// leaves after ``idleSeconds`` without work. A connection has at most one request being handled,
/// so the threads are bounded by the servers' connection limits.
final class HandlerThreads: @unchecked Sendable {
    // `@unchecked`: `jobs` and `waiting` are only touched under `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    /// Threads waiting for a job.
    private var waiting = 0

    /// The pool every receiver in the process shares.
    static let shared = HandlerThreads()
    /// How long a thread waits for a job before it leaves.
    static let idleSeconds = 30.0

    /// Runs `job` on a waiting thread, or on a new one when none is free.
    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        // Each waiting thread takes one job; more jobs queued than threads waiting: one more thread.
        let spawn = jobs.count > waiting
        if !spawn { condition.signal() }
        condition.unlock()
        if spawn {
            Thread.detachNewThread { [self] in
                // Named from the thread itself, so the system sees it (at most 15 bytes).
                Thread.current.name = "FDK.Receiver"
                work()
            }
        }
    }

    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty {
                waiting += 1
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: Self.idleSeconds))
                waiting -= 1
                if !signalled && jobs.isEmpty {
                    condition.unlock()
                    return
                }
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
            condition.lock()
        }
    }
}
