import FormDataKitBody
import FormDataKitWire
import Foundation

/// A transport that can run its exchanges on the thread of a caller that waits for a send anyway
/// (``FormDataRequest/startSynchronous()``), as `curl_easy_perform` does, instead of handing
/// each exchange to its own thread and the answer back: two thread wake-ups fewer per send.
package protocol CallerDrivenTransport: FormDataTransport {
    /// Calls `start` (which starts a send on this transport), then does the transport's work on
    /// the calling thread until `wait` is finished, and returns once it is. When another thread
    /// is already doing that work, this only waits.
    func drive(until wait: SynchronousWait, after start: () -> Void)
}

/// The end of a send that a caller waits for: finished once, from any thread.
package final class SynchronousWait: @unchecked Sendable {
    // `@unchecked`: `state` is guarded by its lock; `semaphore` is thread-safe.
    private struct State {
        var finished = false
        /// Called once finished: wakes the thread that drives the transport for the caller.
        var wake: (@Sendable () -> Void)?
    }

    private let state = Locked(State())
    private let semaphore = DispatchSemaphore(value: 0)

    package init() {}

    /// Whether ``finish()`` was called.
    var isFinished: Bool { state.current.finished }

    /// Sets what ``finish()`` calls to wake the driving thread (at once when already finished).
    func onFinish(wake: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state -> Bool in
            if !state.finished { state.wake = wake }
            return state.finished
        }
        if finished { wake() }
    }

    /// The send has ended: the waiting caller returns.
    package func finish() {
        let (first, wake) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard !state.finished else { return (false, nil) }
            state.finished = true
            defer { state.wake = nil }
            return (true, state.wake)
        }
        guard first else { return }
        semaphore.signal()
        wake?()
    }

    /// Blocks until ``finish()`` was called (returns at once when it was).
    package func wait() {
        semaphore.wait()
        semaphore.signal()
    }
}
