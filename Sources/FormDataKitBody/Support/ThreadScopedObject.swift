#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An object the calling thread carries while it runs some work, found again with ``current``
/// by code that work calls (a thread-specific value: no lock, no lookup by thread). The object
/// is not retained: ``run(with:_:)``'s caller keeps it alive.
package final class ThreadScopedObject<Object: AnyObject>: Sendable {
    private let key: pthread_key_t

    /// A new key, carried by no thread yet.
    package init() {
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else { fatalError("pthread_key_create failed") }
        self.key = key
    }

    /// Runs `work` with the calling thread carrying `object` (restoring what it carried after).
    package func run<T>(with object: Object, _ work: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(object).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return try work()
    }

    /// Makes the calling thread carry `object` from now on (a thread made for one kind of work);
    /// `object` must outlive the thread.
    package func carryForRestOfThread(_ object: Object) {
        pthread_setspecific(key, Unmanaged.passUnretained(object).toOpaque())
    }

    /// Whether the calling thread carries an object (no retain of it, for hot checks).
    package var isCarried: Bool { pthread_getspecific(key) != nil }

    /// The object the calling thread carries (inside ``run(with:_:)``), or nil.
    package var current: Object? {
        pthread_getspecific(key).map { Unmanaged<Object>.fromOpaque($0).takeUnretainedValue() }
    }
}
