#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Writes a ``BodySource`` to a temporary file with bounded memory.
///
/// File ranges go through the kernel (`sendfile(2)` on Linux, no user-space copy) with a plain
/// read/write fallback; in-memory segments are written as they are. A file that changed size is
/// an error and the half-written temporary file is removed.
package enum BodySpooler {
    /// Whether file ranges are copied inside the kernel (on by default; tests turn it off to
    /// exercise the read/write path).
    package static let kernelCopyEnabled = Locked(true)

    /// Spools `source` into a new temporary file and returns it.
    package static func spool(_ source: BodySource, purpose: String = "body") throws(FormDataError) -> TemporaryFile {
        let (file, fd) = try TemporaryStorage.makeFile(purpose: purpose)
        defer { close(fd) }
        do throws(FormDataError) {
            try write(source, to: fd, path: file.path)
        } catch {
            file.remove()
            throw error
        }
        return file
    }

    /// Writes every byte of `source` to the open descriptor `fd` (whose path is `path`, for errors).
    package static func write(_ source: BodySource, to fd: Int32, path: String) throws(FormDataError) {
        for segment in source.segments {
            switch segment.content {
            case .bytes(let data):
                let failure: FormDataError? = data.withUnsafeBytes { bytes in
                    do throws(FormDataError) { try writeAll(bytes, to: fd, path: path) } catch { return error }
                    return nil
                }
                if let failure { throw failure }
            case .file(let range):
                let input = try OpenedFileRange(range)
                let copied = kernelCopyEnabled.current ? try copyInKernel(input, to: fd, path: path) : false
                if !copied {
                    try input.forEachChunk(size: BodyReader.defaultChunkSize) { (chunk) throws(FormDataError) in
                        try writeAll(chunk, to: fd, path: path)
                    }
                }
            }
        }
    }

    /// Writes all of `bytes` to `fd`, retrying short writes.
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(FormDataError) {
        let code = FileDescriptorWriting.writeFully(fd, bytes)
        if code != 0 { throw .temporaryFileFailed(path: path, operation: "write", errno: code) }
    }

    /// Copies the rest of `input` to `fd` inside the kernel. Returns false (having copied nothing)
    /// when the kernel path is not available for these files, so the caller falls back.
    private static func copyInKernel(_ input: OpenedFileRange, to fd: Int32, path: String) throws(FormDataError) -> Bool {
        #if os(Linux)
        var offset = off_t(input.range.offset)
        var left = input.range.length
        var copiedAny = false
        while left > 0 {
            let step = Int(min(left, 1 << 30))
            let sent = sendfile(fd, input.descriptor, &offset, step)
            if sent < 0 {
                let code = errno
                if code == EINTR { continue }
                if !copiedAny && (code == EINVAL || code == ENOSYS || code == EOPNOTSUPP) { return false }
                if code == ENOSPC || code == EFBIG || code == EDQUOT || code == EIO {
                    throw .temporaryFileFailed(path: path, operation: "write", errno: code)
                }
                throw .fileUnreadable(path: input.range.path, errno: code)
            }
            if sent == 0 {
                try input.checkSize()
                throw .fileChanged(path: input.range.path, expectedSize: input.range.expectedFileSize,
                                   actualSize: UInt64(offset))
            }
            copiedAny = true
            left -= UInt64(sent)
        }
        try input.checkSize()
        return true
        #else
        return false
        #endif
    }
}

