import FormDataKitWire

/// How many read-aheads of one kind may be alive at once: each holds descriptors (a pipe's two
/// ends, a body's open files) until its send ends. A read-ahead that finds its budget spent is
/// not made, and the sender uses one that holds none.
package final class ReadAheadBudget: Sendable {
    /// The most alive at once.
    package let limit: Int
    private let alive = Locked(0)

    /// A budget of `limit` read-aheads.
    package init(limit: Int) { self.limit = limit }

    /// The read-aheads alive now.
    package var count: Int { alive.current }

    /// Takes one: false when `limit` are alive.
    package func take() -> Bool {
        alive.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives back one taken with ``take()``.
    package func give() { alive.withLock { $0 -= 1 } }
}

extension ReadAheadBudget {
    /// Pipe read-aheads (``PipeReadAhead``) alive at once: 16 pipes (32 descriptors, at most
    /// 16 MiB of pipe).
    package static let pipes = ReadAheadBudget(limit: 16)
    /// Bodies read from the system's cached pages (``CachedPagesReadAhead``) alive at once: 32,
    /// at most ``CachedPagesReadAhead/maximumFiles`` open files each.
    package static let openedBodies = ReadAheadBudget(limit: 32)
}
