#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKitWire
import Foundation

/// Where the body reader opens and closes a body's files: the system (``SystemFileOpening``), or
/// a test's stand-in for a file system whose opens or closes wait. Passed to what reads bodies
/// (``BodyReadAhead``, ``CurlTransport``) as NIO passes an event loop, never found in thread state.
package protocol FileOpening: Sendable {
    /// Opens `path` for reading, non-blocking (a FIFO put in a file's place cannot block the
    /// open): the descriptor, or minus the error number.
    func openForReading(_ path: String) -> Int32
    /// Closes `descriptor`, open on the file at `path`.
    func close(_ descriptor: Int32, path: String)
}

/// The system's `open(2)` and `close(2)`.
package struct SystemFileOpening: FileOpening {
    /// The system's file opening.
    package init() {}

    package func openForReading(_ path: String) -> Int32 {
        let descriptor = OpenedFileRange.openForReading(path)
        return descriptor >= 0 ? descriptor : -errno
    }

    package func close(_ descriptor: Int32, path: String) { closeDescriptor(descriptor) }
}

/// The system's `close` (named apart: ``SystemFileOpening/close(_:path:)`` hides it).
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }

/// An open file whose size has been checked against the size recorded when the body length was
/// computed, read over one ``FileRange``. Closed on deinit, by the ``FileOpening`` that opened it:
/// let it go only where a file's close may wait (the reader pool, a caller's thread), never on a
/// transport's event thread (``BodyReadAhead`` lets its readers go on the pool).
package final class OpenedFileRange {
    let range: FileRange
    package let descriptor: Int32
    /// Bytes of the range already read.
    private(set) var consumed: UInt64 = 0
    private let files: any FileOpening

    /// Opens `range.path` with `files` and checks that it is a regular file of the recorded size.
    ///
    /// The file is opened non-blocking, so a FIFO put in its place cannot block the open; it is
    /// then refused (``FormDataError/notARegularFile(path:kind:)``), as are devices and sockets.
    package init(_ range: FileRange, files: any FileOpening = SystemFileOpening()) throws(FormDataError) {
        self.range = range
        self.files = files
        let fd = files.openForReading(range.path)
        guard fd >= 0 else {
            if let kind = FileInspection.nonRegularKind(at: range.path) { throw .notARegularFile(path: range.path, kind: kind) }
            throw Self.openError(path: range.path, errno: -fd)
        }
        descriptor = fd
        try checkSize()  // a failure here closes it in deinit
        // The descriptor keeps O_NONBLOCK: it only mattered for the open, and reads of a regular
        // file (all that gets past checkSize) ignore it on disk file systems (see `read`).
    }

    deinit { files.close(descriptor, path: range.path) }

    /// Bytes of the range not yet read.
    var remaining: UInt64 { range.length - consumed }

    /// Throws ``FormDataError/fileChanged(path:expectedSize:actualSize:)`` unless the file still
    /// has the size recorded when the body length was computed (and
    /// ``FormDataError/notARegularFile(path:kind:)`` unless it is a regular file).
    func checkSize() throws(FormDataError) {
        try requireExpectedSize(try FileInspection.regularFileSize(descriptor: descriptor, path: range.path))
    }

    /// Throws ``FormDataError/fileChanged(path:expectedSize:actualSize:)`` unless the file, already
    /// checked to be a regular file of a disk file system, still has its recorded size (after a read).
    private func checkSizeAgain() throws(FormDataError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .fileUnreadable(path: range.path, errno: errno) }
        try requireExpectedSize(UInt64(info.st_size))
    }

    private func requireExpectedSize(_ size: UInt64) throws(FormDataError) {
        if size != range.expectedFileSize {
            throw .fileChanged(path: range.path, expectedSize: range.expectedFileSize, actualSize: size)
        }
    }

    /// Reads up to `buffer.count` bytes of the range into `buffer`; 0 once the range is done
    /// (after checking the file size once more).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int {
        guard remaining > 0 else { return 0 }
        let want = Int(min(UInt64(buffer.count), remaining))
        while true {
            let got = pread(descriptor, buffer.baseAddress, want, off_t(range.offset + consumed))
            if got < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    // A file system that honours O_NONBLOCK for regular files (FUSE can): block as usual.
                    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
                    continue
                }
                throw .fileUnreadable(path: range.path, errno: errno)
            }
            if got == 0 {
                // The file is shorter than it was: report its size now.
                try checkSizeAgain()
                throw .fileChanged(path: range.path, expectedSize: range.expectedFileSize, actualSize: range.offset + consumed)
            }
            consumed += UInt64(got)
            if remaining == 0 { try checkSizeAgain() }
            return got
        }
    }

    /// Calls `body` with consecutive chunks of at most `size` bytes until the range is read.
    package func forEachChunk(
        size: Int, _ body: (UnsafeRawBufferPointer) throws(FormDataError) -> Void
    ) throws(FormDataError) {
        guard remaining > 0 else { return try checkSize() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(min(UInt64(size), remaining)), alignment: 16)
        defer { buffer.deallocate() }
        while remaining > 0 {
            let got = try read(into: buffer)
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
        }
    }

    /// Opens `path` for reading, non-blocking (a FIFO put in a file's place cannot block the
    /// open): the descriptor, or -1 with `errno` set.
    static func openForReading(_ path: String) -> Int32 {
        path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
    }

    /// The error for a failed `open(2)` of `path`.
    static func openError(path: String, errno code: Int32) -> FormDataError {
        switch code {
        case ENOENT, ENOTDIR: return .fileNotFound(path: path)
        case EISDIR: return .fileIsDirectory(path: path)
        default: return .fileUnreadable(path: path, errno: code)
        }
    }
}
