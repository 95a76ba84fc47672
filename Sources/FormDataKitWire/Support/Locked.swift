#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock: the small building block that makes FormDataKit's mutable
/// objects thread-safe.
///
/// One allocation holds the value and its mutex (a `ManagedBuffer`), and copies of a `Locked`
/// share them: a send makes several of these, and an `NSLock` beside each cost two more
/// allocations and a dynamically dispatched call per lock.
package struct Locked<Value>: @unchecked Sendable {
    // `@unchecked`: the value is touched only with the mutex held.

    /// The value, with the mutex in the buffer's one element.
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            withUnsafeMutablePointerToElements { mutex in
                pthread_mutex_destroy(mutex)
                mutex.deinitialize(count: 1)
            }
        }
    }

    private let storage: Storage

    package init(_ value: Value) {
        let buffer = Storage.create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        }
        storage = unsafeDowncast(buffer, to: Storage.self)
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    /// The current value (a copy).
    package var current: Value { withLock { $0 } }
}

extension Locked where Value == Void {
    /// A lock with no value of its own, guarding its owner's stored properties.
    package init() { self.init(()) }

    /// Runs `body` holding the lock.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try withLock { (_: inout Void) in try body() }
    }
}
