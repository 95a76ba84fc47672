import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

extension CurlEventLoop {
    /// Calls `start`, then runs the loop's rounds on the calling thread until `wait` is
    /// finished, returning once it is (``CallerDrivenTransport``). `start` runs before the caller
    /// claims the loop: it builds the caller's body, which may wait on a file system, and no other
    /// sender's exchange may wait for that; the command it queues does not wake the transport's
    /// thread, as the caller takes it next. A caller that then finds the multi handle owned (the
    /// transport's thread busy with other transfers, or another caller) only waits, as any sender
    /// does. Transfers still in flight when the caller's send ends (other threads') go back to the
    /// transport's thread.
    func drive(until wait: SynchronousWait, after start: () -> Void) {
        wait.onFinish { [weak self] in self?.wakeSleepingCaller() }
        let caller = Self.currentThread
        lock.withLock { _ = arrivingCallers.insert(caller) }
        start()
        let claimed = lock.withLock { () -> Bool in
            arrivingCallers.remove(caller)
            guard !wait.isFinished, !stopped, !stopRequested, owner == .nobody else {
                // A command this caller queued without waking anyone goes to the transport's thread.
                if owner == .nobody, !commands.isEmpty { lock.signal() }
                return false
            }
            owner = .caller
            return true
        }
        guard claimed else {
            wait.wait()
            return
        }
        // While it owns the loop, this thread is the transport's event thread: no file waits here.
        while !wait.isFinished, round() {
            let idle = lock.withLock { () -> Bool in
                sleeping = commands.isEmpty && !stopRequested
                return sleeping
            }
            // Finished since the round: ``wakeSleepingCaller()`` saw `sleeping` set, or this sees it.
            if wait.isFinished { break }
            if idle, spinUntilReady() {
                lock.withLock { sleeping = false }
                continue
            }
            poll(idle: idle)
        }
        lock.withLock {
            sleeping = false
            owner = .nobody
            if stopRequested || !commands.isEmpty || !active.isEmpty { lock.signal() }
        }
        wait.wait()
    }

    /// Checks the sockets without sleeping for as long as ``spinWait`` allows, when every transfer
    /// in flight has its body on the wire and waits for its answer (never while a body still goes
    /// out: a socket waits to be writable for the server to read, and the server may need this
    /// CPU); true once a socket is ready or the loop was woken (a command or a stop came: a command's
    /// waker clears `sleeping` first; `curl_multi_poll` does not count its wake-up, and drains it).
    private func spinUntilReady() -> Bool {
        guard !active.isEmpty, active.values.allSatisfy(\.bodyIsOnTheWire) else { return false }
        let limit = spinWait.nextLimit()
        guard limit > 0, let multi = lock.withLock({ self.multi }) else { return false }
        let end = SendTimer.now &+ limit
        var ready: Int32 = 0
        var woken = false
        repeat {
            _ = ccurl_multi_poll(multi, 0, &ready)
            woken = lock.withLock { !sleeping || stopRequested }
        } while ready == 0 && !woken && SendTimer.now < end
        spinWait.record(answered: ready > 0 || woken)
        return ready > 0 || woken
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
