#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a caller opens for its own send before it drives a transport's loop
/// (`startSynchronous()`): their closes, when they come on the loop, wait for that caller to
/// leave the loop and are then done on its thread — the thread that opened them, which waits
/// for this send anyway — instead of waking a reader-pool worker per send (``DeferredClose``).
/// A close that comes after the caller has left (its transfer let go on the transport's own
/// thread) goes to the pool as any other; no other sender ever waits for one of these closes.
package final class CallersFiles: @unchecked Sendable {
    // `@unchecked`: `state` is guarded by its lock.
    private struct State {
        var files: [(descriptor: Int32, path: String)] = []
        var open = true
    }

    private let state = Locked(State())
    private static let scope = ThreadScopedObject<CallersFiles>()

    /// An empty list, open for closes.
    package init() {}

    /// Runs `work` (the caller's start of its send) with every file opened in it on this thread
    /// given to this list (``OpenedFileRange`` asks ``current``).
    package func collect(_ work: () -> Void) { Self.scope.run(with: self, work) }

    /// The list files opened on this thread now belong to (inside ``collect(_:)``), or nil.
    package static var current: CallersFiles? { scope.current }

    /// Takes the close of `descriptor` (open on `path`) for the caller; false once the caller
    /// has closed what it took (then the close goes elsewhere).
    func take(_ descriptor: Int32, file path: String) -> Bool {
        state.withLock { state in
            guard state.open else { return false }
            state.files.append((descriptor, path))
            return true
        }
    }

    /// Closes every file taken so far, on the calling thread (the caller, off the loop); later
    /// closes are not taken.
    package func closeTaken() {
        let files = state.withLock { state -> [(descriptor: Int32, path: String)] in
            state.open = false
            defer { state.files = [] }
            return state.files
        }
        for file in files { DeferredClose.closeNow(file.descriptor, file: file.path) }
    }
}
