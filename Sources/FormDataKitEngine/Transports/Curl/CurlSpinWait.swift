import FormDataKitBody
import FormDataKitWire

/// When a caller driving a ``CurlEventLoop`` (``FormDataRequest/startSynchronous()``) checks its
/// sockets without sleeping before it sleeps for them, and for how long: a value, events in
/// (``record(answered:)``), decisions out (``nextLimit()``), with no clock or socket of its own.
///
/// Why: a thread that sleeps in `poll(2)` for an answer that comes 50–200 µs later pays a sleep
/// and a wake-up, which on a virtual machine can take as long as the answer itself; checking
/// the sockets in a loop for a short while picks such an answer up at once (Go's scheduler spins
/// the same way before it parks a thread). The cost is CPU while nothing else would run on this
/// thread anyway, bounded by the limit, and only while it pays: every spin that ends without a
/// socket ready makes the following waits sleep at once — 1, then 2, 4 … up to
/// ``maximumSkippedWaits`` of them —, and a spin that finds one ready tries again at the next
/// wait. A server that answers in milliseconds costs one spin in 64 waits.
struct CurlSpinWait {
    /// The most waits skipped after spins that found nothing.
    static let maximumSkippedWaits = 64

    /// How long a spin lasts at most, in nanoseconds (0: never spin).
    let limit: UInt64
    /// Waits left that sleep at once.
    private var skipping = 0
    /// How many waits the next fruitless spin makes sleep at once.
    private var penalty = 1

    /// A policy spinning at most `limit` nanoseconds a wait (0: never).
    init(limit: UInt64) { self.limit = limit }

    /// How long the coming wait spins before it sleeps, in nanoseconds; 0: sleep at once.
    mutating func nextLimit() -> UInt64 {
        guard limit > 0 else { return 0 }
        if skipping > 0 {
            skipping -= 1
            return 0
        }
        return limit
    }

    /// The spin the last ``nextLimit()`` allowed ended with a socket ready (`answered`) or not.
    mutating func record(answered: Bool) {
        if answered {
            penalty = 1
        } else {
            skipping = penalty
            penalty = min(penalty * 2, Self.maximumSkippedWaits)
        }
    }
}
