import FormDataKitWire

/// The scheduling state that ``BodyReadAhead`` keeps under its lock: which generation of worker
/// jobs is current, whether one is queued or running, whether a read waits to be woken, and
/// whether the read-ahead was cancelled.
///
/// A restart or a cancel starts a new generation: a worker still in a job of an older one finds
/// out when it next takes the lock, and drops what it did.
struct ReadAheadTurn {
    /// The current generation of worker jobs.
    private(set) var generation = 0
    /// Whether ``cancel()`` was called: no more jobs, no more wake-ups.
    private(set) var cancelled = false
    /// Whether a worker job of the current generation is queued or running.
    var filling = false
    /// Whether a read said "would block": the next job that has something for it wakes it.
    var consumerWaiting = false

    /// Whether a job started in `generation` is still current.
    func isCurrent(_ generation: Int) -> Bool { generation == self.generation }

    /// Takes the waiting read's wake-up: true once after a read said "would block".
    mutating func takeWaitingConsumer() -> Bool {
        defer { consumerWaiting = false }
        return consumerWaiting
    }

    /// Starts over (libcurl rewinding the body): jobs of the old generation are dropped, none is
    /// queued, no read waits.
    mutating func restart() {
        generation += 1
        filling = false
        consumerWaiting = false
    }

    /// Stops for good: jobs of the old generation are dropped and no read is woken.
    mutating func cancel() {
        cancelled = true
        generation += 1
        consumerWaiting = false
    }
}
