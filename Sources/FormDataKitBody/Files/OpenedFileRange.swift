#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSpace
import Foundation

/// An open file whose size has been checked against the size recorded when the body length was
/// computed, read over one ``FileRange``. Closed on deinit.
package final class OpenedFileRange {
    package let range: FileRange
    package let descriptor: Int32
    /// Bytes of the range already read.
    package private(set) var consumed: UInt64 = 0
    /// Whether `O_NONBLOCK` has been taken off the descriptor (before a splice).
    private var blocking = false
    /// The caller that opened the file for its own send, before driving the loop (nil otherwise).
    private let caller = CallersFiles.current

    /// A test seam that stands for a file system whose opens of some paths wait: which paths
    /// (asked without waiting, by a read that must not wait), and what an open of one does (on the
    /// thread that opens it: a test blocks there); with ``stats``, a `stat` of one by
    /// ``FileInspection/regularFileSize(at:inFull:)`` (a form's build) waits too. Only
    /// its paths are affected, so tests that run beside one using it are not. Nil outside tests.
    package struct OpenSeam: Sendable {
        /// Whether an open of the path waits.
        package var blocks: @Sendable (String) -> Bool
        /// Called before an open of a path ``blocks`` names.
        package var wait: @Sendable (String) -> Void
        /// Whether a `stat` of a path ``blocks`` names waits as an open does (given the path).
        package var stats: @Sendable (String) -> Bool
        /// Whether, for a path ``blocks`` names, its close waits instead of its open (a file system
        /// that flushes on close; ``DeferredClose``).
        package var closes: @Sendable (String) -> Bool

        /// A seam; the arguments are described on the properties.
        package init(
            blocks: @escaping @Sendable (String) -> Bool, wait: @escaping @Sendable (String) -> Void,
            stats: @escaping @Sendable (String) -> Bool = { _ in false }, closes: @escaping @Sendable (String) -> Bool = { _ in false }
        ) {
            self.blocks = blocks
            self.wait = wait
            self.stats = stats
            self.closes = closes
        }
    }

    /// The test seam (nil outside tests).
    package static let openSeam = Locked<OpenSeam?>(nil)

    /// Opens `range.path` and checks that it is a regular file of the recorded size — or takes
    /// the descriptor this send's build opened and checked for it (``FilesOpenedByBuild``).
    ///
    /// The file is opened non-blocking, so a FIFO put in its place cannot block the open; it is
    /// then refused (``FormDataError/notARegularFile(path:kind:)``), as are devices and sockets.
    package init(_ range: FileRange) throws(FormDataError) {
        self.range = range
        if let descriptor = FilesOpenedByBuild.current?.take(path: range.path, expectedSize: range.expectedFileSize) {
            // Opened and checked a moment ago by this send's build, on this thread.
            self.descriptor = descriptor
            return
        }
        if let seam = Self.openSeam.current, seam.blocks(range.path), !seam.closes(range.path) { seam.wait(range.path) }
        let fd = Self.openForReading(range.path)
        guard fd >= 0 else {
            let code = errno
            if let kind = FileInspection.nonRegularKind(at: range.path) { throw .notARegularFile(path: range.path, kind: kind) }
            throw Self.openError(path: range.path, errno: code)
        }
        descriptor = fd
        try checkSize()
        // The descriptor keeps O_NONBLOCK: it only mattered for the open, and reads of a regular
        // file (all that gets past checkSize) ignore it on disk file systems (see `read`).
    }

    /// Closed here, or when let go on a transport's event thread by the caller that opened it
    /// (once it leaves the loop) or on the reader pool (``DeferredClose``).
    deinit { DeferredClose.close(descriptor, file: range.path, caller: caller) }

    /// Bytes of the range not yet read.
    package var remaining: UInt64 { range.length - consumed }

    /// Throws ``FormDataError/fileChanged(path:expectedSize:actualSize:)`` unless the file still
    /// has the size recorded when the body length was computed (and
    /// ``FormDataError/notARegularFile(path:kind:)`` unless it is a regular file).
    package func checkSize() throws(FormDataError) {
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
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int {
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

    /// Reads the rest of the range into `buffer` (room for ``remaining`` bytes and one more) only
    /// from what the system already holds in memory, never waiting for a disk or a network
    /// (`preadv2` with `RWF_NOWAIT`). Returns false when a read would have to wait, or the file
    /// system cannot say (then some bytes may have been read: read the rest with ``read(into:)``);
    /// true once the range is read and the file's size checked once more.
    ///
    /// For a range that ends where the file did, that check is the last read itself: it asks for
    /// one byte past the recorded end and must find the end there (the byte after the range may
    /// be written); a read that finds more, or less, takes the file's size to report it. Else the
    /// size is taken once the range is read. (A cached read cannot tell the end from a page not
    /// held: a file grown since, whose new page the system has already dropped, reads as
    /// unchanged, as with ``CachedPagesReadAhead``'s check.)
    /// - Throws: as ``read(into:)``.
    package func readRestWithoutWaiting(into buffer: UnsafeMutableRawPointer) throws(FormDataError) -> Bool {
        let endsAtFileEnd = range.offset + range.length == range.expectedFileSize
        while remaining > 0 {
            let ask = remaining + (endsAtFileEnd ? 1 : 0)
            let got = cfilespace_read_cached(descriptor, buffer + Int(consumed), Int64(ask), Int64(range.offset + consumed))
            if got == -Int64(EAGAIN) { return false }
            if got < 0 { throw .fileUnreadable(path: range.path, errno: Int32(-got)) }
            if got == 0 || UInt64(got) > remaining {
                // Shorter, or longer, than recorded: report its size now.
                try checkSizeAgain()
                let reached = range.offset + consumed + min(UInt64(got), remaining + 1)
                throw .fileChanged(path: range.path, expectedSize: range.expectedFileSize, actualSize: reached)
            }
            consumed += UInt64(got)
            // A read across the recorded end found it (fewer bytes than asked): the size is unchanged.
            if remaining == 0, endsAtFileEnd, UInt64(got) < ask { return true }
        }
        try checkSizeAgain()
        return true
    }

    /// What ``splice(into:limit:)`` did.
    package enum SpliceResult: Equatable {
        /// This many bytes of the range moved into the pipe.
        case moved(Int)
        /// The pipe is full: nothing moved.
        case pipeFull
        /// This file cannot be spliced: read it with ``read(into:)`` instead.
        case unsupported
    }

    /// Moves up to `limit` more bytes of the range into the pipe whose write end is `pipe`,
    /// without copying them (`splice(2)`; the file side may wait for the disk, so never call this
    /// on a transport's thread). Once the range is done, the file's size is checked once more.
    /// - Throws: as ``read(into:)``.
    package func splice(into pipe: Int32, limit: Int) throws(FormDataError) -> SpliceResult {
        guard remaining > 0 else { return .moved(0) }
        if !blocking {
            // Opened non-blocking against FIFOs; a regular file's reads wait as usual, so a
            // splice's "would wait" can only mean a full pipe.
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            blocking = true
        }
        let want = Int64(min(UInt64(max(1, limit)), remaining))
        let moved = cfilespace_splice_to_pipe(descriptor, Int64(range.offset + consumed), pipe, want)
        switch moved {
        case -Int64(EAGAIN): return .pipeFull
        case -Int64(EINVAL), -Int64(ENOSYS): return .unsupported
        case ..<0: throw .fileUnreadable(path: range.path, errno: Int32(-moved))
        case 0:
            try checkSizeAgain()
            throw .fileChanged(path: range.path, expectedSize: range.expectedFileSize, actualSize: range.offset + consumed)
        default:
            consumed += UInt64(moved)
            if remaining == 0 { try checkSizeAgain() }
            return .moved(Int(moved))
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
    package static func openForReading(_ path: String) -> Int32 {
        path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
    }

    /// The error for a failed `open(2)` of `path`.
    package static func openError(path: String, errno code: Int32) -> FormDataError {
        switch code {
        case ENOENT, ENOTDIR: return .fileNotFound(path: path)
        case EISDIR: return .fileIsDirectory(path: path)
        default: return .fileUnreadable(path: path, errno: code)
        }
    }
}
