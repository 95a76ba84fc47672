import FormDataKitWire

/// Marks the threads that run a transport's event loop — the curl transport's own thread, and a
/// caller while it drives that loop (`startSynchronous()`) — which must never wait on a file
/// system: what would close a body's file there (a read-ahead let go when its transfer ends)
/// closes it on the reader pool instead (``DeferredClose``).
package enum TransportEventThread {
    private static let mark = ThreadMark()

    /// Runs `work` with the current thread marked (a caller driving the loop).
    package static func run(_ work: () -> Void) { mark.run(work) }

    /// Marks the calling thread for good (a transport's own event thread).
    package static func markCurrentThread() { mark.markCurrentThread() }

    /// Whether the current thread runs a transport's event loop.
    package static var isCurrent: Bool { mark.isCurrent }
}
