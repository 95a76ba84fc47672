import FormDataKitBody
import FormDataKitWire
import Foundation

/// What a ``SendDriver`` has for its façade, waiting to run in order, one at a time: kept under
/// the driver's lock and run by the thread that claimed the drain once it has released it.
/// Values rather than closures: a send's four or five events cost no allocation each.
struct SendDriverOutbox {
    enum Item {
        /// An event for the façade.
        case event(SendDriver.Event)
        /// Body bytes went out: reported as `SendDriver/Event/progress(sent:delta:)` (reports
        /// that wait together are one, the latest count with the deltas added up: a transport
        /// may report every few kilobytes).
        case progress(sent: Int64, delta: Int64)
        /// Decoded response body bytes, for the driver's `onResponseBody`.
        case responseBody(Data)
    }

    /// What waits to run. A drain swaps it with the emptied storage of the batch it ran, so the
    /// storage stays here for the next items.
    private var items: [Item] = []
    private var draining = false

    /// Queues `item`; true when the caller has claimed the drain and must run ``take(into:)``
    /// until it returns false.
    mutating func append(_ item: Item) -> Bool {
        if case .progress(let sent, let delta) = item, delta > 0, case .progress(_, let waiting)? = items.last, waiting > 0 {
            items[items.count - 1] = .progress(sent: sent, delta: waiting + delta)
            return false
        }
        items.append(item)
        guard !draining else { return false }
        draining = true
        return true
    }

    /// Moves what waits into `batch` (empty: the caller clears the batch it ran outside the lock,
    /// as releasing an item may run a deinit; its storage is given back here); false, and the
    /// drain released, when nothing waits.
    mutating func take(into batch: inout [Item]) -> Bool {
        swap(&batch, &items)
        if batch.isEmpty { draining = false }
        return !batch.isEmpty
    }
}
