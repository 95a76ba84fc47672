#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mark a thread carries while it does one kind of work, asked with ``isCurrent`` from code
/// that must behave differently there (a thread-specific value: no lock, no lookup by thread).
package final class ThreadMark: Sendable {
    private let key: pthread_key_t

    /// A new mark, carried by no thread yet.
    package init() {
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else { fatalError("pthread_key_create failed") }
        self.key = key
    }

    /// Runs `work` with the calling thread marked (restoring the mark it had after).
    package func run<T>(_ work: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, previous) }
        return try work()
    }

    /// Marks the calling thread for the rest of its life (a thread made for this work alone).
    package func markCurrentThread() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
    }

    /// Whether the calling thread carries the mark.
    package var isCurrent: Bool { pthread_getspecific(key) != nil }
}
