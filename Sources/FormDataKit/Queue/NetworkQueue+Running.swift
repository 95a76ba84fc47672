import Foundation

/// How a ``NetworkQueue`` runs: events go into its state machine under the lock, the progress
/// follows, the delegate's calls go to the queue's mailbox in that order, and the machine's
/// actions (start, cancel, fail unstarted) are carried out outside the lock.
extension NetworkQueue {
    /// Feeds `event` to the machine, then does what it says; `notice` (the delegate's call and
    /// the streams' event for it) is queued before anything the event causes.
    func apply(_ event: NetworkQueueStateMachine.Event, notice: ((any NetworkQueueDelegate)?, NetworkQueueEvent)? = nil) {
        let work = core.withLock { core -> [(FormDataRequest, NetworkQueueStateMachine.Action)] in
            let actions = core.machine.handle(event)
            updateProgress(core.machine)
            if let (delegate, event) = notice { post(delegate, event, streams: Array(core.streams.values)) }
            reportProgress(&core)
            return collect(actions, &core)
        }
        perform(work)
    }

    /// Adds `request` with its `host` and `share`, or refuses it (``FormDataError/requestAlreadyQueued(url:isRunning:)``)
    /// leaving the queue as it was. The request joins (the one check of membership, under the
    /// request's lock) and the machine hears of it in one step under the queue's lock, so a send
    /// of the request that ends meanwhile is never reported before the queue knows the request.
    func add(_ request: FormDataRequest, host: String, share: UInt64, priority: Int) throws(FormDataError) {
        let joined = core.withLock { core -> Result<[(FormDataRequest, NetworkQueueStateMachine.Action)], FormDataError> in
            let id = core.nextID + 1
            // Lock order: the queue's, then the request's (a request never calls its queue
            // while holding its own lock).
            if let refusal = request.join(self, id: id) { return .failure(refusal) }
            core.nextID = id
            core.requests[id] = request
            let actions = core.machine.handle(.add(id: id, host: host, uploadShare: share, priority: priority))
            updateProgress(core.machine)
            reportProgress(&core)
            return .success(collect(actions, &core))
        }
        perform(try joined.get())
    }

    /// What the machine's `actions` need done outside the lock; the bookkeeping (the finished
    /// notice, keeping the queue alive) is done here, under it.
    private func collect(
        _ actions: [NetworkQueueStateMachine.Action], _ core: inout Core
    ) -> [(FormDataRequest, NetworkQueueStateMachine.Action)] {
        var work: [(FormDataRequest, NetworkQueueStateMachine.Action)] = []
        for action in actions {
            switch action {
            case .queueFinished:
                core.noticesPending += 1
                let (delegate, streams) = (core.delegate(for: .queueFinished), Array(core.streams.values))
                mailbox.deliver { [self] in
                    delegate?.queueFinished(self)
                    for stream in streams { stream.yield(.queueFinished) }
                    self.core.withLock { $0.noticesPending -= 1 }
                    idle.withLock { idle.broadcast() }
                }
                core.keepAlive = nil
            case .start(let id), .cancelRunning(let id), .failUnstarted(let id):
                if let request = core.requests[id] { work.append((request, action)) }
                if case .start = action { core.keepAlive = self }
            }
        }
        return work
    }

    /// Carries out the machine's actions on the requests (outside the lock).
    private func perform(_ work: [(FormDataRequest, NetworkQueueStateMachine.Action)]) {
        for (request, action) in work {
            switch action {
            case .start(let id):
                // Refused when the request was started by hand after it joined: that send
                // reports to this queue as request `id` when it ends (the request is this
                // queue's member until then), so nothing is failed here and the batch goes on.
                request.send(nil)
                // Cancelled between the machine's start and the send's claim.
                if core.withLock({ $0.machine.isCancelled(id) }) { request.cancel() }
            case .cancelRunning:
                request.cancel()
            case .failUnstarted:
                request.send(cancelledFirst: true, nil)
            case .queueFinished:
                break
            }
        }
    }

    /// Queues the delegate's call for `event` and the streams' copy of it.
    private func post(
        _ delegate: (any NetworkQueueDelegate)?, _ event: NetworkQueueEvent, streams: [AsyncStream<NetworkQueueEvent>.Continuation]
    ) {
        // Nobody to tell: nothing is queued (and no worker woken for it).
        guard delegate != nil || !streams.isEmpty else { return }
        mailbox.deliver {
            switch event {
            case .requestStarted(let request): delegate?.requestStarted(request)
            case .receivedResponseHeaders(let request, let headers): delegate?.request(request, didReceiveResponseHeaders: headers)
            case .requestFinished(let request): delegate?.requestFinished(request)
            case .requestFailed(let request, _): delegate?.requestFailed(request)
            case .queueFinished: break
            }
            for stream in streams { stream.yield(event) }
        }
    }

    /// Sets the two progress objects from the machine's counters (under the lock), never moving
    /// a `Progress` through a state where completed exceeds total.
    private func updateProgress(_ machine: NetworkQueueStateMachine) {
        Self.set(uploadProgress, completed: machine.uploadUnitsDone, total: machine.totalUploadUnits)
        Self.set(downloadProgress, completed: machine.downloadUnitsDone, total: machine.totalDownloadUnits)
    }

    /// Queues ``NetworkQueue/progressBlock``'s call when the counters moved since its last one.
    private func reportProgress(_ core: inout Core) {
        guard let block = core.progressBlock else { return }
        let progress = NetworkQueueProgress(core.machine)
        guard progress != core.progressReported else { return }
        core.progressReported = progress
        mailbox.deliver { block(progress) }
    }

    private static func set(_ progress: Progress, completed: UInt64, total: UInt64) {
        var (completed, total) = (Int64(clamping: completed), Int64(clamping: total))
        // corelibs Foundation traps when a total goes back to 0: a reset queue keeps its last
        // total with nothing done (0.0) until a request is added.
        if total == 0 { total = progress.totalUnitCount }
        if total >= progress.totalUnitCount {
            if progress.totalUnitCount != total { progress.totalUnitCount = total }
            if progress.completedUnitCount != completed { progress.completedUnitCount = completed }
        } else {
            if progress.completedUnitCount != completed { progress.completedUnitCount = completed }
            progress.totalUnitCount = total
        }
    }

    // MARK: - What its requests report

    // Each call comes after the request's own delegate method and block for the same moment,
    // in the same order, as ASIHTTPRequest called its queue last.

    /// Request `id` started.
    func requestStarted(_ request: FormDataRequest, id: Int) {
        let (delegate, streams) = core.withLock { ($0.delegate(for: .requestStarted), Array($0.streams.values)) }
        post(delegate, .requestStarted(request), streams: streams)
    }

    /// Request `id`'s response head arrived; `expectedLength`: its Content-Length.
    func request(_ request: FormDataRequest, id: Int, didReceiveResponseHeaders headers: [String: String], expectedLength: UInt64?) {
        let delegate = core.withLock { $0.delegate(for: .responseHeaders) }
        apply(.responseHead(id: id, expectedLength: expectedLength), notice: (delegate, .receivedResponseHeaders(request, headers)))
    }

    /// Request `id`'s current attempt has sent `sent` bytes of the `length`-byte body.
    func request(_ request: FormDataRequest, id: Int, sent: UInt64, of length: UInt64) {
        apply(.uploaded(id: id, sent: sent, length: length))
    }

    /// Request `id`'s current response has brought `received` body bytes.
    func request(_ request: FormDataRequest, id: Int, received: UInt64) {
        apply(.downloaded(id: id, received: received))
    }

    /// Request `id`'s send ended.
    func request(_ request: FormDataRequest, id: Int, endedWith error: FormDataError?) {
        let delegate = core.withLock { core -> (any NetworkQueueDelegate)? in
            core.requests[id] = nil
            return core.delegate(for: error == nil ? .requestFinished : .requestFailed)
        }
        // The queue no longer hears of this request (sent again by hand, it is on its own).
        request.leaveQueue()
        let event: NetworkQueueEvent = error.map { .requestFailed(request, $0) } ?? .requestFinished(request)
        apply(.ended(id: id, succeeded: error == nil), notice: (delegate, event))
    }

    /// Request `id`'s own ``FormDataRequest/cancel()`` while it waits unstarted.
    func cancelWaiting(_ request: FormDataRequest, id: Int) {
        apply(.cancelWaiting(id: id))
    }
}
