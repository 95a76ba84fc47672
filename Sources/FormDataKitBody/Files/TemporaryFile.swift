#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A temporary file FormDataKit created (a spooled or compressed body). It is removed when the
/// last reference goes away, or earlier with ``remove()``, so it is never left behind; removal
/// goes through the file owner (`OwnedFile`), which unlinks the path only while it is still the file created.
public final class TemporaryFile: Sendable {
    /// The file's path (inside ``TemporaryStorage/directory()``).
    public var path: String { file.path }
    private let file: OwnedFile
    private let removed = Locked(false)

    init(_ file: OwnedFile) { self.file = file }

    deinit { remove() }

    /// Removes the file now (idempotent).
    public func remove() {
        let already = removed.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        if !already { file.remove() }
    }

    /// The file's current size in bytes, or nil when it cannot be read.
    public var size: UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_size) : nil
    }
}
