import Foundation

extension CurlEventLoop {
    /// Calls `start`, then runs the loop's rounds on the calling thread until `wait` is
    /// finished, returning once it is (``CallerDrivenTransport``). A caller that finds the multi
    /// handle owned (the transport's thread busy with other transfers, or another caller) only
    /// waits, as any sender does. Transfers still in flight when the caller's send ends (other
    /// threads') go back to the transport's thread.
    func drive(until wait: SynchronousWait, after start: () -> Void) {
        let claimed = lock.withLock { () -> Bool in
            guard !stopped, !stopRequested, owner == .nobody, startIfNeeded() else { return false }
            owner = .caller
            return true
        }
        guard claimed else {
            start()
            wait.wait()
            return
        }
        wait.onFinish { [weak self] in self?.wakeSleepingCaller() }
        start()
        while !wait.isFinished, round() {
            let idle = lock.withLock { () -> Bool in
                sleeping = commands.isEmpty && !stopRequested
                return sleeping
            }
            // Finished since the round: ``wakeSleepingCaller()`` saw `sleeping` set, or this sees it.
            if wait.isFinished { break }
            poll(idle: idle)
        }
        lock.withLock {
            sleeping = false
            owner = .nobody
            if stopRequested || !commands.isEmpty || !active.isEmpty { lock.signal() }
        }
        wait.wait()
    }

    /// Wakes the caller driving the loop when it sleeps in `curl_multi_poll` (its send finished
    /// on another thread: a reader pool's failed read, say).
    private func wakeSleepingCaller() {
        lock.withLock {
            guard owner == .caller, sleeping else { return }
            sleeping = false
            wakeOwner()
        }
    }
}
