#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Marks the thread a send's body was built on while the send starts there: a thread that has
/// just checked the body's files itself (a caller that waits for the send anyway, or the shared
/// global queue), so a transport may read a small body's files there too — but only what the
/// system already holds in memory (``OpenedFileRange/readRestWithoutWaiting(into:)``) — and skip
/// a hand-off to its reader pool.
///
/// A transport's own threads (its event loop, the send timer) are never marked: a re-send after
/// a redirect, a challenge or a timeout starts there and reads on the pool, as every send did.
package enum BodyBuildingThread {
    /// The thread-specific key; its value is non-nil while ``run(_:)`` runs on that thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else { fatalError("pthread_key_create failed") }
        return key
    }()

    /// Runs `work` with the current thread marked (restoring the mark it had after).
    /// - Parameter work: what runs marked: a send's first start.
    package static func run(_ work: () -> Void) {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, previous) }
        work()
    }

    /// Whether the current thread is marked by ``run(_:)``.
    package static var isCurrent: Bool { pthread_getspecific(key) != nil }
}
