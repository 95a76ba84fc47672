import FormDataKitBody
import FormDataKitEngine
import FormDataKitWire
import Foundation

/// What a ``NetworkQueue`` needs of a request: its exact body length without building or
/// spooling a body it keeps, joining the queue (at most one, never while it is sent),
/// starting, and failing unstarted.
extension FormDataRequest {
    /// The exact number of bytes the body will have, computed by encoding the form as segments
    /// (files are not read, nothing is spooled, nothing is kept). A compressed body's length is
    /// known only once it is compressed: this gives the uncompressed length then. Nil when the
    /// form cannot be encoded (the send will fail and say why).
    var exactPostLengthWithoutSpooling: UInt64? {
        let snapshot = state.withLock { $0 }
        if let built = snapshot.built { return built.postLength }
        return try? Self.encodedLength(of: snapshot)
    }

    /// Joins `observer`'s queue as request `id` (the queue is held weakly), or gives why not:
    /// the one rule of queue membership — a request is in one queue at a time, and joins none
    /// while it is being sent. Checked and set under the request's lock, so two queues adding
    /// it at once cannot both succeed.
    /// - Returns: nil once joined; ``FormDataError/requestAlreadyQueued(url:isRunning:)`` when refused.
    func join(_ observer: any RequestQueueObserver, id: Int) -> FormDataError? {
        let url = self.url
        return sending.withLock { state -> FormDataError? in
            if state.queue.observer != nil || state.current.inFlight {
                return .requestAlreadyQueued(url: url.absoluteString, isRunning: state.current.inFlight)
            }
            state.queue.observer = observer
            state.queue.id = id
            return nil
        }
    }

    /// Leaves the queue it joined (it will not hear of later sends).
    func leaveQueue() {
        sending.withLock { $0.queue = QueueMembership() }
    }

    /// Sends for a queue; false when the request is already being sent (it is not started twice).
    func sendForQueue() -> Bool {
        let inFlight = sending.withLock { $0.current.inFlight }
        guard !inFlight else { return false }
        send(nil)
        return true
    }

    /// Fails without sending, with ``FormDataError/cancelled``, reporting as a cancelled send
    /// does (the delegate's `requestFailed`, ``failedBlock``, then the queue): a queued request
    /// cancelled before it started.
    func failUnstartedAsCancelled(completion: (@Sendable (Result<FormDataResponse, FormDataError>) -> Void)? = nil) {
        let context = SendContext(request: self, completion: completion)
        context.send.cancel()
        if claim(context) {
            context.begin()
        } else {
            context.send.abandon()
            completion?(.failure(.requestInProgress))
        }
    }

    /// The queue this request waits in unstarted, told of its cancel; false when there is none.
    func cancelWhileQueued() -> Bool {
        let membership = sending.withLock { $0.current.inFlight ? nil : $0.queue }
        guard let membership, let observer = membership.observer else { return false }
        observer.cancelWaiting(self, id: membership.id)
        return true
    }
}
