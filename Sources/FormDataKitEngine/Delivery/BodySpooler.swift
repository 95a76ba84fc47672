#if canImport(Glibc)
import FormDataKitBody
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSpace
import Foundation

/// Writes a ``BodySource`` to a temporary file with bounded memory.
///
/// The file's blocks are reserved first (`fallocate(2)` with `FALLOC_FL_KEEP_SIZE` on Linux), so a
/// disk too small for the body fails at once with nothing written, and the file system allocates
/// the body's blocks up front instead of write by write (faster, measured below). File ranges are then copied
/// through one ``copyBufferSize`` buffer; in-memory segments are written as they are. A file that
/// changed size is an error and the half-written temporary file is removed.
///
/// Why a small user-space buffer and not `sendfile(2)`: the file parts of a multipart body sit at
/// offsets that are not multiples of the page size, where the kernel's file-to-file copies are
/// slower. `formdata-bench spool-copy` measures this choice against `sendfile` (with and without
/// the reservation), other buffer sizes and `cat` in one run. On this project's ext4 machine the
/// spool was 0.27–0.29 s per GiB in the W3 runs (1.2–1.4× `cat`), `sendfile` without reserving
/// 0.49–0.50 s; the other strategies were close to this one and ordered differently between runs.
package enum BodySpooler {
    /// Size of the one buffer file ranges are copied through: small enough to stay in the CPU's
    /// cache between the read and the write.
    static let copyBufferSize = 256 << 10

    /// Spools `source` into a new temporary file and returns it.
    package static func spool(_ source: BodySource, purpose: String = "body") throws(FormDataError) -> TemporaryFile {
        try TemporaryStorage.writeNewFile(purpose: purpose) { (fd, path) throws(FormDataError) in
            try reserveSpace(source.length, in: fd, path: path)
            try write(source, to: fd, path: path)
        }
    }

    /// Writes every byte of `source` to the open descriptor `fd` (whose path is `path`, for errors).
    static func write(_ source: BodySource, to fd: Int32, path: String) throws(FormDataError) {
        try source.forEachChunk(size: copyBufferSize) { (chunk) throws(FormDataError) in
            try FileDescriptorWriting.writeAll(chunk, to: fd, path: path)
        }
    }

    /// Reserves `length` bytes of disk for the file open as `fd` without changing its size. A full
    /// disk, quota or file-size limit is an error (reported as the write it foresees); a file
    /// system that cannot reserve (or a platform without `fallocate`) just skips the step.
    package static func reserveSpace(_ length: UInt64, in fd: Int32, path: String) throws(FormDataError) {
        guard length > 0, length <= UInt64(Int64.max) else { return }
        let code = cfilespace_reserve(fd, Int64(length))
        if code == ENOSPC || code == EDQUOT || code == EFBIG {
            throw .temporaryFileFailed(path: path, operation: "write", errno: code)
        }
    }
}
