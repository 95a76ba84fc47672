#if os(Linux)
import FormDataKitWire
import CFileSpace
import Foundation
import Glibc

/// A body with file parts read on the thread that sends it, from the pages the system already
/// holds in memory, and only from them (Linux).
///
/// Its files are opened and checked where the body was built (``open(_:budget:)``, never on a
/// transport's event thread). ``read(into:capacity:)`` then copies straight into the sender's
/// buffer with `preadv2(RWF_NOWAIT)`, which copies cached pages or says it would wait — as a
/// pipe's read does, and with the same one copy, but without a pipe to make, a worker to wake
/// three times per body, or a third thread on the machine. The first read that would wait (a page
/// not in memory, a file system that cannot say) hands the rest of the body, from that byte on,
/// to `fallback`: a read-ahead on the ``BodyReaderPool``, as if it had read the body from the
/// start. No read here ever waits for a disk or a network file system.
///
/// Each file's size is checked once its range is read, before the range's last bytes go out:
/// the range's last read asks one byte past the recorded end of the file when the sender's
/// buffer has room, else one more cached read across that end must find exactly its last byte
/// (a file that grew, or shrank, fails the send with ``FormDataError/fileChanged(path:expectedSize:actualSize:)``;
/// when that read cannot tell, the file's size is taken on a worker). Bytes changed in place
/// with the size unchanged, which no check can tell, may show in what is sent, as with any read.
///
/// ``read(into:capacity:)`` and ``restart(at:)`` run on the sending thread; ``cancel()`` on any.
package final class CachedPagesReadAhead: ReadAheadBody, @unchecked Sendable {
    // `@unchecked`: the position, `fallback` and `makeFallback` belong to the sending thread (set
    // in ``start(onReady:fallback:)`` before its first read); `check` is guarded by its lock.

    /// The most file parts of a body read this way (its files stay open until the send ends).
    package static let maximumFiles = 8

    /// What a worker's size check found, and whether the sender waits for it.
    private struct Check {
        /// Bumped by a restart or a cancel: a check of an older generation is dropped.
        var generation = 0
        var running = false
        var failure: FormDataError?
        /// The file segment whose size the worker found right: its last bytes may go.
        var passed: Int?
        var cancelled = false
    }

    private let source: BodySource
    /// The open file of each file segment (nil for bytes).
    private let files: [OpenedFileRange?]
    private let budget: ReadAheadBudget
    private let pool: BodyReaderPool
    private var segment = 0
    private var offsetInSegment: UInt64 = 0
    /// The segment whose file's size a worker checked (its last bytes need no probe).
    private var verified: Int?
    private var fallback: (any ReadAheadBody)?
    private var makeFallback: ((UInt64, @escaping @Sendable (any ReadAheadBody) -> Void) -> (any ReadAheadBody)?)?
    private var onReady: (@Sendable (CachedPagesReadAhead) -> Void)?
    private let check = Locked(Check())

    /// The body's files opened (non-blocking opens, regular files of their recorded sizes), or nil
    /// when it cannot be read this way: no file parts or more than ``maximumFiles``, `budget`
    /// spent, a first file page the system does not hold (or a file system that cannot say), or
    /// a file that does not open as recorded (the read-ahead that reads it instead reports that). Call only where the body was built (``BodyBuildingThread``): an open may wait.
    package static func open(_ source: BodySource, budget: ReadAheadBudget = .openedBodies, pool: BodyReaderPool = .shared)
        -> CachedPagesReadAhead?
    {
        let paths = source.segments.compactMap { segment -> String? in
            if case .file(let range) = segment.content { range.path } else { nil }
        }
        guard !paths.isEmpty, paths.count <= maximumFiles else { return nil }
        // The test seam stands for a file system whose opens of its paths wait: not opened here.
        if let seam = OpenedFileRange.openSeam.current, paths.contains(where: seam.blocks) { return nil }
        guard budget.take() else { return nil }
        var files: [OpenedFileRange?] = []
        for segment in source.segments {
            guard case .file(let range) = segment.content else {
                files.append(nil)
                continue
            }
            guard let file = try? OpenedFileRange(range) else {
                budget.give()
                return nil
            }
            files.append(file)
        }
        // A file system that cannot say what it holds (tmpfs) or a first page not in memory: the
        // pool's read-ahead from the start, with no hand-over.
        if let first = files.lazy.compactMap({ $0 }).first(where: { $0.range.length > 0 }) {
            var probe: UInt8 = 0
            guard cfilespace_read_cached(first.descriptor, &probe, 1, Int64(first.range.offset)) == 1 else {
                budget.give()
                return nil
            }
        }
        return CachedPagesReadAhead(source: source, files: files, budget: budget, pool: pool)
    }

    private init(source: BodySource, files: [OpenedFileRange?], budget: ReadAheadBudget, pool: BodyReaderPool) {
        self.source = source
        self.files = files
        self.budget = budget
        self.pool = pool
    }

    deinit { budget.give() }

    /// Sets what is called (with this read-ahead, on a worker) when a read that said
    /// ``BodyReadAhead/ReadResult/wouldBlock`` can go on, and how to make the read-ahead that
    /// takes over from a byte of the body when a read would wait, given the `onReady` it calls
    /// (nil: none can be made, the send fails). Call once, on the sending thread, before the
    /// first read.
    package func start(
        onReady: @escaping @Sendable (CachedPagesReadAhead) -> Void,
        fallback: @escaping (_ offset: UInt64, _ onReady: @escaping @Sendable (any ReadAheadBody) -> Void) -> (any ReadAheadBody)?
    ) {
        self.onReady = onReady
        makeFallback = fallback
    }

    /// Nothing to start: the files are open and their pages are read as the sender asks.
    package func prefetch() {}

    /// Whether the rest of the body is read by the fallback (a page was not in memory), for tests.
    package var handedOver: Bool { fallback != nil }

    /// Copies up to `capacity` bytes of the body into `buffer` from cached pages. Never waits.
    package func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> BodyReadAhead.ReadResult {
        if let fallback { return fallback.read(into: buffer, capacity: capacity) }
        let checked = check.withLock { state -> (waiting: Bool, failure: FormDataError?) in
            if let passed = state.passed {
                verified = passed
                state.passed = nil
            }
            return (state.running, state.failure)
        }
        if let failure = checked.failure { return .failed(failure) }
        if checked.waiting { return .wouldBlock }
        var copied = 0
        while copied < capacity, segment < source.segments.count {
            let step = copy(segment: segment, into: buffer + copied, capacity: capacity - copied)
            switch step {
            case .copied(let count, let segmentDone):
                copied += count
                if segmentDone { (segment, offsetInSegment) = (segment + 1, 0) } else { offsetInSegment += UInt64(count) }
            case .wouldWait:
                if copied > 0 { return .bytes(copied) }
                return handOver(into: buffer, capacity: capacity)
            case .checkOnWorker(let definite):
                // This segment's last bytes stay unsent (not counted) until its size is known.
                if copied > 0 { return .bytes(copied) }
                return checkSize(of: segment, definite: definite)
            case .failed(let error):
                if copied > 0 { return .bytes(copied) }
                return .failed(error)
            }
        }
        return copied > 0 ? .bytes(copied) : .end
    }

    /// Starts again from byte `offset` of the body (libcurl rewinding it for a re-send).
    package func restart(at offset: UInt64) {
        if let fallback { return fallback.restart(at: offset) }
        check.withLock { state in
            state.generation += 1
            (state.running, state.failure, state.passed) = (false, nil, nil)
        }
        verified = nil
        (segment, offsetInSegment) = source.position(of: offset)
    }

    /// Stops: no more `onReady`, and a fallback stops too.
    package func cancel() {
        let fallback = check.withLock { state -> (any ReadAheadBody)? in
            state.generation += 1
            state.cancelled = true
            return self.fallback
        }
        fallback?.cancel()
    }

    // MARK: - Reading

    private enum Step {
        /// `count` bytes copied; whether the segment is done (its size checked, for a file).
        case copied(Int, segmentDone: Bool)
        /// The next bytes are not in memory, or the file system cannot say.
        case wouldWait
        /// The file's size must be taken on a worker: `definite` when it is known to have changed.
        case checkOnWorker(definite: FormDataError?)
        case failed(FormDataError)
    }

    /// Copies from segment `index` at the current position.
    private func copy(segment index: Int, into buffer: UnsafeMutableRawPointer, capacity: Int) -> Step {
        let left = source.segments[index].length - offsetInSegment
        switch source.segments[index].content {
        case .bytes(let data):
            let count = Int(min(UInt64(capacity), left))
            data.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { buffer.copyMemory(from: base + Int(offsetInSegment), byteCount: count) }
            }
            return .copied(count, segmentDone: UInt64(count) == left)
        case .file(let range):
            guard let file = files[index] else { return .wouldWait }
            if left == 0 { return endOfRange(range, file: file, copied: 0) }
            // With room in the buffer, the read of a range that ends where its file did asks one
            // byte more: finding the end there is the size check (no probe after it).
            let acrossEnd = UInt64(capacity) > left && range.offset + range.length == range.expectedFileSize && verified != index
            let want = Int64(min(UInt64(capacity), left + (acrossEnd ? 1 : 0)))
            let got = cfilespace_read_cached(file.descriptor, buffer, want, Int64(range.offset + offsetInSegment))
            if got == -Int64(EAGAIN) { return .wouldWait }
            if got < 0 { return .failed(.fileUnreadable(path: range.path, errno: Int32(-got))) }
            if got == 0 || UInt64(got) > left {
                // Shorter, or longer, than recorded: report its size now (taken on a worker).
                let reached = got == 0 ? range.offset + offsetInSegment : range.expectedFileSize + 1
                return .checkOnWorker(definite: .fileChanged(path: range.path, expectedSize: range.expectedFileSize, actualSize: reached))
            }
            if UInt64(got) < left { return .copied(Int(got), segmentDone: false) }
            if acrossEnd { return .copied(Int(got), segmentDone: true) }
            return endOfRange(range, file: file, copied: Int(got))
        }
    }

    /// The range of `file` is read (its last `copied` bytes in the buffer, not yet counted): one
    /// cached read of two bytes from the file's recorded last byte must find exactly that byte
    /// (none for an empty file), else the size is taken on a worker.
    private func endOfRange(_ range: FileRange, file: OpenedFileRange, copied: Int) -> Step {
        if verified == segment { return .copied(copied, segmentDone: true) }
        var probe: (UInt8, UInt8) = (0, 0)
        let size = range.expectedFileSize
        let found = withUnsafeMutableBytes(of: &probe) { bytes in
            cfilespace_read_cached(file.descriptor, bytes.baseAddress!, size == 0 ? 1 : 2, Int64(size == 0 ? 0 : size - 1))
        }
        if found == (size == 0 ? 0 : 1) { return .copied(copied, segmentDone: true) }
        if found >= 0 {
            let definite = FormDataError.fileChanged(
                path: range.path, expectedSize: size, actualSize: found == 0 ? min(size, range.offset + range.length) : size + 1)
            return .checkOnWorker(definite: definite)
        }
        return .checkOnWorker(definite: nil)
    }

    /// Takes the size of segment `index`'s file on a worker; the sender waits for it.
    private func checkSize(of index: Int, definite: FormDataError?) -> BodyReadAhead.ReadResult {
        guard files[index] != nil else { return .wouldBlock }
        let generation = check.withLock { state -> Int in
            state.running = true
            return state.generation
        }
        pool.submit { [self] in
            var failure = definite
            do throws(FormDataError) { try files[index]?.checkSize() } catch { failure = error }
            let wake = check.withLock { state -> Bool in
                guard state.generation == generation, !state.cancelled else { return false }
                state.running = false
                if let failure { state.failure = failure } else { state.passed = index }
                return true
            }
            if wake { onReady?(self) }
        }
        return .wouldBlock
    }

    /// The rest of the body, from the current position, goes to a fallback read-ahead.
    private func handOver(into buffer: UnsafeMutableRawPointer, capacity: Int) -> BodyReadAhead.ReadResult {
        let offset = source.segments[..<segment].reduce(0) { $0 + $1.length } + offsetInSegment
        let relay: @Sendable (any ReadAheadBody) -> Void = { [weak self] _ in
            if let self { self.onReady?(self) }
        }
        guard let made = makeFallback?(offset, relay) else {
            return .failed(.fileUnreadable(path: files[segment]?.range.path ?? "", errno: EMFILE))
        }
        let cancelled = check.withLock { state -> Bool in
            fallback = made
            return state.cancelled
        }
        if cancelled {
            made.cancel()
            return .end
        }
        made.prefetch()
        return made.read(into: buffer, capacity: capacity)
    }
}
#endif
