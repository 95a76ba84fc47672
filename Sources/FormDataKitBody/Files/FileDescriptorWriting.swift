#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing a whole buffer to a file descriptor, retrying short writes and `EINTR`.
package enum FileDescriptorWriting {
    /// Writes every byte of `bytes` to `fd`; returns 0, or the `errno` of the failed write.
    package static func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// Writes all of `bytes` to `fd`, the temporary file at `path`.
    /// - Throws: ``FormDataError/temporaryFileFailed(path:operation:errno:)`` naming `path`.
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(FormDataError) {
        let code = writeFully(fd, bytes)
        if code != 0 { throw .temporaryFileFailed(path: path, operation: "write", errno: code) }
    }
}
