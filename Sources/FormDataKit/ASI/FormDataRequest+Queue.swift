import Foundation

/// What a ``NetworkQueue`` needs of a request: its exact body length without building or
/// spooling a body it keeps, and joining the queue (at most one, never while it is sent).
extension FormDataRequest {
    /// Which waiting requests a ``NetworkQueue`` starts first (`NSOperation`'s `queuePriority`,
    /// which ASINetworkQueue honoured): a higher priority starts before a lower one, requests of
    /// one priority in the order they were added. Read when the request is added to the queue;
    /// ``makeOperation()`` gives it to the operation. `.normal` by default.
    public var queuePriority: Operation.QueuePriority {
        get { sending.withLock { $0.settings.queuePriority } }
        set { sending.withLock { $0.settings.queuePriority = newValue } }
    }

    /// The exact number of bytes the body will have, computed by encoding the form as segments
    /// (files are not read, nothing is spooled, nothing is kept). A compressed body's length is
    /// known only once it is compressed: this gives the uncompressed length then. Nil when the
    /// form cannot be encoded (the send will fail and say why).
    var exactPostLengthWithoutSpooling: UInt64? {
        let snapshot = state.withLock { $0 }
        if let built = snapshot.built { return built.postLength }
        return try? Self.encodedLength(of: snapshot)
    }

    /// Joins `queue` as request `id` (the queue is held weakly), or gives why not: the one rule
    /// of queue membership — a request is in one queue at a time, and joins none while it is
    /// being sent. Checked and set under the request's lock, so two queues adding it at once
    /// cannot both succeed.
    /// - Returns: nil once joined; ``FormDataError/requestAlreadyQueued(url:isRunning:)`` when refused.
    func join(_ queue: NetworkQueue, id: Int) -> FormDataError? {
        let url = self.url
        return sending.withLock { state -> FormDataError? in
            if state.membership.queue != nil || state.current.inFlight {
                return .requestAlreadyQueued(url: url.absoluteString, isRunning: state.current.inFlight)
            }
            state.membership = QueueMembership(queue: queue, id: id)
            return nil
        }
    }

    /// Leaves the queue it joined (it will not hear of later sends).
    func leaveQueue() {
        sending.withLock { $0.membership = QueueMembership() }
    }

    /// Tells the queue this request waits in unstarted, if any, of its cancel.
    func cancelWhileQueued() {
        guard let membership = sending.withLock({ $0.current.inFlight ? nil : $0.membership }) else { return }
        membership.queue?.cancelWaiting(self, id: membership.id)
    }
}
