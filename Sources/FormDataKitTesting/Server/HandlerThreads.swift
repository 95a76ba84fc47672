import FormDataKit
import Foundation

/// The threads a receiver's request handlers run on. A handler blocks (it reads the body as it
/// arrives and may take its time), so every request being handled needs a thread of its own; a
/// thread that finished one is reused for the next instead of a new one made per request, and
/// leaves after ``idleSeconds`` without work. Each server has its own; a connection has at most
/// one request being handled, so the threads are bounded by the server's connection limit.
final class HandlerThreads: @unchecked Sendable {
    /// A handler's work: runs on a pool thread and returns what to do once that thread is free
    /// again (send the answer). The next request, which the answer lets the client send, then
    /// finds the thread free instead of making another.
    typealias Job = @Sendable () -> @Sendable () -> Void

    // `@unchecked`: `jobs` and `free` are only touched under `condition`.
    private let condition = NSCondition()
    private var jobs: [Job] = []
    /// Threads waiting for a job, or about to.
    private var free = 0

    /// How long a thread waits for a job before it leaves.
    static let idleSeconds = 30.0

    /// Runs `job` on a free thread, or on a new one when none is free.
    func run(_ job: @escaping Job) {
        condition.lock()
        jobs.append(job)
        // Each free thread takes one job; more jobs queued than threads free: one more thread.
        let spawn = jobs.count > free
        if spawn {
            free += 1  // the new thread, free until it takes its first job
        } else {
            condition.signal()
        }
        condition.unlock()
        if spawn {
            Thread.detachNewThread { [self] in
                // Named from the thread itself, so the system sees it (at most 15 bytes).
                ThreadName.setCurrent("FDK.Receiver")
                work()
            }
        }
    }

    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty {
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: Self.idleSeconds))
                if !signalled && jobs.isEmpty {
                    free -= 1
                    condition.unlock()
                    return
                }
            }
            let job = jobs.removeFirst()
            free -= 1
            condition.unlock()
            let finish = job()
            condition.lock()
            free += 1
            condition.unlock()
            finish()
            condition.lock()
        }
    }
}
