import FormDataKitWire

/// Marks the thread a send's body was built on while the send starts there: a thread that has
/// just checked the body's files itself (a caller that waits for the send anyway, or the shared
/// global queue), so a transport may read a small body's files there too — but only what the
/// system already holds in memory (``OpenedFileRange/readRestWithoutWaiting(into:)``) — and skip
/// a hand-off to its reader pool.
///
/// A transport's own threads (its event loop, the send timer) are never marked: a re-send after
/// a redirect, a challenge or a timeout starts there and reads on the pool, as every send did.
package enum BodyBuildingThread {
    private static let mark = ThreadMark()

    /// Runs `work` with the current thread marked (restoring the mark it had after).
    /// - Parameter work: what runs marked: a send's first start.
    package static func run(_ work: () -> Void) { mark.run(work) }

    /// Whether the current thread is marked by ``run(_:)``.
    package static var isCurrent: Bool { mark.isCurrent }
}
