import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

/// The work of one libcurl multi handle: every transfer of one ``CurlTransport``.
///
/// One thread at a time owns the multi handle and runs its rounds: the transport's own thread,
/// or a caller waiting for its send (``drive(until:after:)``, as `curl_easy_perform` does: two
/// thread wake-ups fewer per send). Other threads never touch libcurl handles: they queue a
/// command and wake the owner (`curl_multi_wakeup` when it sleeps in `curl_multi_poll`, the
/// condition when nobody owns the handle). A round applies the commands, runs
/// `curl_multi_perform` and collects finished transfers; it never reads a file (bodies come
/// from a ``BodyReadAhead``) and keeps no clock of its own (the send driver's idle clock
/// cancels). With no transfer in flight the transport's thread gives the handle up and waits a
/// second at a time, for idle connections: kept ones whose server closed them are closed within
/// about two seconds (``CurlDeadConnectionProbe``), the others after
/// ``CurlTransport/Configuration/idleConnectionTimeout`` with no send.
final class CurlEventLoop: @unchecked Sendable {
    // `@unchecked`: `commands`, `started`, `owner`, `sleeping`, `stopRequested`, `stopped`,
    // `arrivingCallers` and `multi` are guarded by `lock`; `active`, `spareHandles`, `idleSince`,
    // `multiWasUsed` and `spinWait` are touched only by the owner of the multi handle (ownership
    // passes under `lock`), and `multi` is used by its owner and by `curl_multi_wakeup` under
    // `lock`, which libcurl allows from any thread.
    enum Command {
        case start(CurlSend)
        case cancel(CurlSend)
        /// The body `readAhead` of the transfer on easy handle `easy` has bytes again.
        case resume(easy: UInt, readAhead: BodyReadAhead)
        /// The response consumer of the transfer on easy handle `easy` caught up.
        case resumeReceiving(easy: UInt)
        /// A transfer that ended is done waiting for its cookie jar's file to be written.
        case finish(EndedTransfer)
    }

    /// A transfer out of the multi handle, its result read, waiting on the reader pool for its
    /// jar file's write before its send completes.
    struct EndedTransfer: @unchecked Sendable {
        // `@unchecked`: the transfer is touched only by the loop's owner: the pool job only carries it back.
        let transfer: CurlTransfer
        let code: Int32
    }

    /// Who runs the multi handle's rounds.
    enum Owner {
        /// Nobody: the transport's thread waits for a command.
        case nobody
        /// The transport's own thread.
        case thread
        /// A caller waiting for its send (``drive(until:after:)``).
        case caller
    }

    /// Guards the state above; its condition wakes the transport's thread when nobody owns the handle.
    let lock = NSCondition()
    var commands: [Command] = []
    private var started = false
    var owner = Owner.nobody
    /// Whether the owner is (about to be) asleep in `curl_multi_poll` with no command queued:
    /// only then does a new command wake it (a busy owner takes it next round, and the
    /// wake-up's socket write and the extra round it causes are saved).
    var sleeping = false
    var stopRequested = false
    var stopped = false
    /// Threads about to drive the loop (``drive(until:after:)``), still starting their sends:
    /// a command one of them queues does not wake the transport's thread.
    var arrivingCallers: Set<UInt> = []
    /// The calling thread, as ``arrivingCallers`` holds it.
    static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
    /// Signalled once the thread has released every libcurl handle and ended.
    private let finished = DispatchSemaphore(value: 0)
    /// Cookie jar writes on the reader pool (``finish(_:after:)``): they call into libcurl too.
    private let jarWrites = DispatchGroup()
    var multi: UnsafeMutableRawPointer?
    private let maximumConnectionsPerHost: Int
    private let maximumIdleConnections: Int
    private let maximumStreamsPerConnection: Int
    let idleConnectionTimeout: TimeInterval

    /// Transfers in the multi handle, by easy handle (owner only).
    var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Since when no transfer is in the multi handle while it may keep connections (owner only).
    var idleSince: ContinuousClock.Instant?
    /// Whether a transfer ran on the current multi handle (which may then keep connections).
    var multiWasUsed = false
    /// What makes libcurl close kept connections whose server closed them (owner only).
    var deadConnectionProbe = CurlDeadConnectionProbe()
    /// Easy handles of ended transfers, reset, for the next ones (owner only; at most
    /// ``maximumSpareHandles``, each with libcurl's 64 KiB upload and 16 KiB receive buffers).
    var spareHandles: [UnsafeMutableRawPointer] = []
    static let maximumSpareHandles = 16
    /// Whether a caller driving the loop spins before it sleeps for an answer (callers only,
    /// one at a time: ``drive(until:after:)``).
    var spinWait: CurlSpinWait

    init(
        maximumConnectionsPerHost: Int, maximumIdleConnections: Int, idleConnectionTimeout: TimeInterval,
        maximumStreamsPerConnection: Int = 100, spinWaitNanoseconds: UInt64 = 0
    ) {
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.maximumStreamsPerConnection = maximumStreamsPerConnection
        self.maximumIdleConnections = maximumIdleConnections
        self.idleConnectionTimeout = idleConnectionTimeout
        spinWait = CurlSpinWait(limit: spinWaitNanoseconds)
    }

    /// Queues `send` to start; false when the loop has stopped or libcurl cannot be used.
    func start(_ send: CurlSend) -> Bool {
        submit(.start(send))
    }

    /// Queues the cancellation of `send`.
    func cancel(_ send: CurlSend) {
        _ = submit(.cancel(send))
    }

    /// Queues resuming the transfer on easy handle `easy` (its address), paused until its body's
    /// `readAhead` had bytes; nothing happens when that transfer has ended meanwhile.
    func resume(easy: UInt, readAhead: BodyReadAhead) {
        _ = submit(.resume(easy: easy, readAhead: readAhead))
    }

    /// Queues resuming the response of the transfer on easy handle `easy` (its address), paused
    /// while its consumer was behind; a transfer that is not paused (ended meanwhile, or another
    /// one on a reused handle) is left as it is.
    func resumeReceiving(easy: UInt) {
        _ = submit(.resumeReceiving(easy: easy))
    }

    /// Ends the thread after its current round; sends still in flight fail with ``FormDataError/cancelled``.
    func stop() {
        lock.withLock {
            stopRequested = true
            wakeOwner()
        }
    }

    /// ``stop()``, then blocks until the thread has released its libcurl handles and ended (at
    /// once when it never started), and every cookie jar write on the reader pool is done. For a
    /// program about to exit: OpenSSL's exit-time cleanup must not run while this transport
    /// still calls into libcurl.
    func stopAndWait() {
        let running = lock.withLock { () -> Bool in
            stopRequested = true
            wakeOwner()
            return started
        }
        guard running else { return }
        finished.wait()
        finished.signal()  // for another waiter
        jarWrites.wait()
    }

    private func submit(_ command: Command) -> Bool {
        lock.withLock { () -> Bool in
            guard !stopped, !stopRequested, startIfNeeded() else { return false }
            commands.append(command)
            if owner == .nobody {
                if !arrivingCallers.contains(Self.currentThread) { lock.signal() }
            } else if sleeping {
                sleeping = false
                wakeOwner()
            }
            return true
        }
    }

    /// Makes the multi handle and starts the transport's thread, once (under `lock`); false
    /// when libcurl cannot make a multi handle.
    func startIfNeeded() -> Bool {
        guard !started else { return true }
        guard let handle = makeMulti() else { return false }
        multi = handle
        started = true
        let thread = Thread { [self] in
            // Named from the thread itself, so the system sees it (at most 15 bytes).
            ThreadName.setCurrent("FDK.Curl")
            run()
        }
        thread.start()
        return true
    }

    /// Wakes whoever owns the multi handle (under `lock`): `curl_multi_wakeup` for an owner in
    /// (or about to enter) `curl_multi_poll`, the condition for the transport's waiting thread.
    func wakeOwner() {
        if owner == .nobody {
            lock.signal()
        } else if let multi {
            _ = ccurl_multi_wakeup(multi)
        }
    }

    // MARK: - The loop's thread

    /// A multi handle with the transport's connection limits, multiplexing HTTP/2 streams.
    func makeMulti() -> UnsafeMutableRawPointer? {
        guard let handle = ccurl_multi_init() else { return nil }
        _ = ccurl_multi_setopt_long(handle, CurlMultiOption.pipelining, CurlMultiOption.multiplex)
        if maximumStreamsPerConnection > 0 {
            _ = ccurl_multi_setopt_long(handle, CurlMultiOption.maxConcurrentStreams, maximumStreamsPerConnection)
        }
        if maximumConnectionsPerHost > 0 {
            _ = ccurl_multi_setopt_long(handle, CurlMultiOption.maxHostConnections, maximumConnectionsPerHost)
        }
        if maximumIdleConnections > 0 {
            _ = ccurl_multi_setopt_long(handle, CurlMultiOption.maxConnects, maximumIdleConnections)
        }
        return handle
    }

    /// The transport's thread: waits until nobody owns the multi handle and there is work (or a
    /// second passed, for idle connections), then runs rounds until no transfer is in flight.
    private func run() {
        while true {
            let stopping = lock.withLock { () -> Bool in
                var waited = false
                while !(owner == .nobody && (stopRequested || !commands.isEmpty || !active.isEmpty || waited)) {
                    waited = !lock.wait(until: Date(timeIntervalSinceNow: 1)) || waited
                }
                owner = .thread
                return stopRequested
            }
            if stopping { break }
            while round() {
                let next = lock.withLock { () -> Bool? in
                    if active.isEmpty && commands.isEmpty && !stopRequested {
                        owner = .nobody  // nothing in flight: give the handle up
                        return nil
                    }
                    sleeping = commands.isEmpty && !stopRequested
                    return sleeping
                }
                guard let idle = next else { break }
                poll(idle: idle)
            }
            if lock.withLock({ stopRequested }) { break }
        }
        // Stopped: fail what is left, then release libcurl's handles.
        // (Commands are released outside the lock: releasing a send can release the transport,
        // whose deinit calls stop(), which takes the lock.)
        let leftover = lock.withLock { () -> [Command] in
            stopped = true
            defer { commands = [] }
            return commands
        }
        for command in leftover {
            switch command {
            case .start(let send): send.complete(.cancelled)
            case .finish(let ended): ended.transfer.send.complete(.cancelled)
            case .cancel, .resume, .resumeReceiving: break
            }
        }
        if let multi = lock.withLock({ self.multi }) {
            for (easy, transfer) in active {
                _ = ccurl_multi_remove_handle(multi, easy)
                transfer.send.complete(.cancelled)
            }
            active = [:]
            for easy in spareHandles { ccurl_easy_cleanup(easy) }
            spareHandles = []
            deadConnectionProbe.release(from: multi)
            lock.withLock { self.multi = nil }
            _ = ccurl_multi_cleanup(multi)
        }
        finished.signal()
    }

    /// One round by the owner: queued commands applied, libcurl driven (with the dead-connection
    /// probe about once a second while connections may be kept), finished transfers collected,
    /// idle connections closed. False when a stop was requested (then only the
    /// commands are applied: the transport's thread ends what is in flight).
    func round() -> Bool {
        let (pending, stopping, current) = lock.withLock { () -> ([Command], Bool, UnsafeMutableRawPointer?) in
            defer { commands = [] }
            return (commands, stopRequested, multi)
        }
        guard let multi = current else { return false }
        for command in pending { apply(command, multi: multi) }
        if stopping { return false }
        if multiWasUsed { deadConnectionProbe.runIfDue(in: multi, now: ContinuousClock.now) }
        var running: Int32 = 0
        _ = ccurl_multi_perform(multi, &running)
        collectFinished(multi)
        closeIdleConnections(multi)
        return true
    }

    /// Sleeps in `curl_multi_poll` (at most a second when `idle`, else only checks the sockets),
    /// then marks the owner awake.
    func poll(idle: Bool) {
        guard let multi = lock.withLock({ self.multi }) else { return }
        var ready: Int32 = 0
        _ = ccurl_multi_poll(multi, idle ? 1000 : 0, &ready)
        if idle { lock.withLock { sleeping = false } }
    }

    private func apply(_ command: Command, multi: UnsafeMutableRawPointer) {
        switch command {
        case .start(let send):
            guard !send.isCompleted else { return }  // cancelled before it reached the loop
            do throws(FormDataError) {
                add(try send.makeTransfer(reusing: spareHandles.popLast(), transfersInFlight: active.count), to: multi)
            } catch {
                send.complete(error)
            }
        case .cancel(let send):
            let transfer = send.current
            if let transfer, let easy = transfer.easy, active[easy] != nil {
                _ = ccurl_multi_remove_handle(multi, easy)
                active[easy] = nil
            }
            send.complete(.cancelled)
            if let transfer { recycle(transfer) }
        case .resume(let key, let readAhead):
            if let easy = UnsafeMutableRawPointer(bitPattern: key), let transfer = active[easy] {
                transfer.resumeBody(readAhead: readAhead)
            }
        case .resumeReceiving(let key):
            if let easy = UnsafeMutableRawPointer(bitPattern: key), let transfer = active[easy] {
                transfer.resumeReceiving()
            }
        case .finish(let ended):
            ended.transfer.send.transferFinished(ended.transfer, code: ended.code)
            recycle(ended.transfer)
        }
    }

    private func add(_ transfer: CurlTransfer, to multi: UnsafeMutableRawPointer) {
        guard let easy = transfer.easy else { return }
        let code = ccurl_multi_add_handle(multi, easy)
        guard code == 0 else {
            transfer.send.complete(
                .connectionFailure(
                    underlying: UnderlyingError(domain: "libcurl-multi", code: Int(code), message: "curl_multi_add_handle failed")))
            return
        }
        active[easy] = transfer
        multiWasUsed = true
    }

    private func collectFinished(_ multi: UnsafeMutableRawPointer) {
        var easy: UnsafeMutableRawPointer?
        var code: Int32 = 0
        while ccurl_multi_next_done(multi, &easy, &code) == 1 {
            if let handle = easy, deadConnectionProbe.ended(handle, in: multi) { continue }
            guard let handle = easy, let transfer = active.removeValue(forKey: handle) else { continue }
            _ = ccurl_multi_remove_handle(multi, handle)
            transfer.reportUnreadInterimResponses(code: code)
            if let jarWrite = transfer.exchangeEnded() {
                finish(EndedTransfer(transfer: transfer, code: code), after: jarWrite)
                continue
            }
            transfer.send.transferFinished(transfer, code: code)
            recycle(transfer)
        }
    }

    /// Writes the cookie jar's file on the reader pool (its file system may wait), then finishes
    /// `ended` back on the loop: the send completes once its cookies are in the file. A loop
    /// stopped meanwhile fails the send as it fails every send in flight.
    private func finish(_ ended: EndedTransfer, after jarWrite: CookieJarFileWrite) {
        jarWrites.enter()
        BodyReaderPool.shared.submit { [weak self, jarWrites] in
            defer { jarWrites.leave() }
            jarWrite.run()
            guard self?.submit(.finish(ended)) != true else { return }
            ended.transfer.send.complete(.cancelled)
            ended.transfer.releaseHandle()  // here, before ``stopAndWait()`` returns
        }
    }
}
