#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Checks on files a form refers to.
package enum FileInspection {
    /// The size of the readable regular file at `path`; a missing path, a directory, or an
    /// unreadable file is a ``FormDataError`` naming the path.
    package static func regularFileSize(at path: String) throws(FormDataError) -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw OpenedFileRange.openError(path: path, errno: errno) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw .fileIsDirectory(path: path) }
        guard access(path, R_OK) == 0 else { throw .fileUnreadable(path: path, errno: errno) }
        return UInt64(info.st_size)
    }
}
