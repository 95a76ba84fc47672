#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Closes the files of a send's body off a transport's event thread (``TransportEventThread``).
///
/// A body's read-ahead is let go where its transfer ends, on the event thread, and its last
/// reference closes the files it read. A `close` can wait: a network file system flushes on
/// close, a FUSE file system asks its daemon. So there a file's descriptor goes to a
/// ``BodyReaderPool`` worker (several together: one job, one wake-up); elsewhere it closes at
/// once. A descriptor waiting here stays open, so its number is not reused before it is closed.
/// (A read-ahead's pipe closes where it is let go: a pipe never waits, and handing it over
/// cost W8 time, measured.)
package enum DeferredClose {
    private struct Pending {
        var files: [(descriptor: Int32, path: String)] = []
        var queued = false
    }

    private static let pending = Locked(Pending())

    /// Closes `descriptor`, open on the file at `path`, now — or, when called on a transport's
    /// event thread, by the caller that opened it for its own send once it leaves the loop
    /// (`caller`, ``CallersFiles``), else on a reader-pool worker.
    package static func close(_ descriptor: Int32, file path: String, caller: CallersFiles? = nil) {
        guard TransportEventThread.isCurrent else { return closeNow(descriptor, file: path) }
        if let caller, caller.take(descriptor, file: path) { return }
        let submit = pending.withLock { state -> Bool in
            state.files.append((descriptor, path))
            defer { state.queued = true }
            return !state.queued
        }
        if submit { BodyReaderPool.shared.submit { closePending() } }
    }

    private static func closePending() {
        let batch = pending.withLock { state -> [(descriptor: Int32, path: String)] in
            defer { state = Pending() }
            return state.files
        }
        for file in batch { closeNow(file.descriptor, file: file.path) }
    }

    /// Closes `descriptor` on the calling thread (never on a transport's event thread).
    static func closeNow(_ descriptor: Int32, file path: String) {
        if let seam = OpenedFileRange.openSeam.current, seam.blocks(path), seam.closes(path) { seam.wait(path) }
        closeDescriptor(descriptor)
    }
}

/// The system's `close` (named apart: ``DeferredClose/close(_:file:)`` hides it inside the enum).
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
