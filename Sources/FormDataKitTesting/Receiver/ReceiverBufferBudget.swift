import FormDataKit
import Foundation

/// The bytes all the requests a ``FormReceiver`` is handling at once may hold to inflate and
/// parse their bodies (``FormReceiver/Limits/maxBufferedBytes``): the one count across
/// connections. A request reserves what it keeps before keeping it and gives it all back once
/// it has been answered; a reservation that would pass the total is refused whole, so the count
/// never passes it.
final class ReceiverBufferBudget: Sendable {
    /// The most bytes held at once.
    let total: Int
    private let state = Locked<(held: Int, peak: Int)>((0, 0))

    /// A budget of `total` bytes (at least 0).
    init(total: Int) { self.total = max(0, total) }

    /// Bytes held now, by every request being handled.
    var held: Int { state.withLock { $0.held } }
    /// The most bytes held at once since the receiver started.
    var peak: Int { state.withLock { $0.peak } }

    /// Reserves `count` more bytes; false (nothing reserved) when that would pass ``total``.
    func reserve(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        return state.withLock { state in
            guard count <= total - state.held else { return false }
            state.held += count
            state.peak = max(state.peak, state.held)
            return true
        }
    }

    /// Gives back `count` reserved bytes.
    func release(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.held -= count }
    }
}
