import FormDataKitWire
import Dispatch

extension DispatchQueue {
    /// The default-priority global queue, fetched once: `DispatchQueue.global()` makes a new
    /// wrapper object at every call, and sends hand work to it several times each.
    package static let sharedGlobal = DispatchQueue.global()
}
