#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Closes descriptors of a send's body — its files, the pipes of its read-ahead — off a
/// transport's event thread (``TransportEventThread``).
///
/// A body's read-ahead is let go where its transfer ends, on the event thread, and its last
/// reference closes what it holds. A `close` can wait: a network or FUSE file system flushes on
/// close, and tearing a 1 MiB pipe down takes a W8 transfer ~20 µs of that thread, which sends
/// for every transfer. So there the descriptors go to a ``BodyReaderPool`` worker, several
/// together (one job, one wake-up), pipes first (they never wait); elsewhere they close at once.
/// A descriptor waiting here stays open, so its number is not reused before it is closed.
package enum DeferredClose {
    private struct Pending {
        /// Descriptors to close, with the file's path for a file (nil: a pipe end).
        var descriptors: [(descriptor: Int32, file: String?)] = []
        var queued = false
    }

    private static let pending = Locked(Pending())

    /// Closes `descriptor` now, or on a reader-pool worker when called on a transport's event thread.
    /// - Parameters:
    ///   - descriptor: what to close.
    ///   - file: the path of the file it is open on (nil for a pipe end), for the test seam.
    package static func close(_ descriptor: Int32, file: String? = nil) {
        guard TransportEventThread.isCurrent else { return closeNow(descriptor, file: file) }
        let submit = pending.withLock { state -> Bool in
            state.descriptors.append((descriptor, file))
            defer { state.queued = true }
            return !state.queued
        }
        if submit { BodyReaderPool.shared.submit { closePending() } }
    }

    private static func closePending() {
        let batch = pending.withLock { state -> [(descriptor: Int32, file: String?)] in
            defer { state = Pending() }
            return state.descriptors
        }
        for entry in batch where entry.file == nil { closeNow(entry.descriptor, file: nil) }
        for entry in batch where entry.file != nil { closeNow(entry.descriptor, file: entry.file) }
    }

    private static func closeNow(_ descriptor: Int32, file: String?) {
        if let file, let seam = OpenedFileRange.openSeam.current, seam.blocks(file), seam.closes(file) { seam.wait(file) }
        closeDescriptor(descriptor)
    }
}

/// The system's `close` (named apart: ``DeferredClose/close(_:file:)`` hides it inside the enum).
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
