#if os(Linux)
import FormDataKitWire
import CFileSpace
import Foundation
import Glibc

/// Reads one body with file parts ahead of the thread that sends it, through a pipe (Linux).
///
/// A ``BodyReaderPool`` worker writes the body into the pipe in order: its bytes with `write`,
/// its file ranges with `splice` — the file's cached pages are moved into the pipe, not copied,
/// and any wait for a disk or a network file system happens there, on the worker. The sending
/// thread's ``read(into:capacity:)`` reads the pipe, which never waits: the body crosses one copy
/// on its way to libcurl's buffer, as a `read` of the file would, instead of two through
/// ``BodyReadAhead``'s chunks, and without a hand-off per chunk while the pipe keeps ahead.
///
/// Bounded: the pipe holds at most its capacity (up to ``pipeCapacityLimit``); a worker that
/// finds it full stops, and the next read that leaves it at most half full queues the next fill.
/// At most ``ReadAheadBudget/pipes``' limit of pipes exist at once (two descriptors each):
/// ``make(source:pool:budget:onReady:)`` says nil beyond that, or when the system gives no pipe,
/// and the caller uses a ``BodyReadAhead``.
///
/// A file's size is checked when it is opened, once its range is in the pipe, and once more
/// before the body's last byte goes in (``PipeBodyWriter``): the pipe holds the file's own pages,
/// and a file cut short later could still change them. Bytes changed in place with the size
/// unchanged, which no check can tell, may show in what is sent (with chunks, as far as they
/// were read).
package final class PipeReadAhead: ReadAheadBody, @unchecked Sendable {
    // `@unchecked`: every stored variable below `lock` is guarded by it; `consumerPipe` is the
    // consumer's thread's own (set in init and in `restart`, which run there).

    /// The largest pipe asked for (1 MiB, Linux's default limit for a process without privileges).
    package static let pipeCapacityLimit = 1 << 20
    /// The most file parts of a body sent this way (their files stay open until its last byte).
    package static let maximumFiles = 8

    /// How many pipe read-aheads may be alive at once (``ReadAheadBudget/pipes`` by default).
    package typealias Budget = ReadAheadBudget

    /// A pipe's two ends, closed together when the last holder lets go: a worker still writing
    /// holds it, so its write never meets a closed read end.
    private final class Pipe: @unchecked Sendable {
        let readEnd: Int32
        let writeEnd: Int32
        let capacity: Int

        init?(for length: UInt64) {
            let wanted = Int(clamping: min(UInt64(PipeReadAhead.pipeCapacityLimit), max(64 << 10, length)))
            var ends: [Int32] = [-1, -1]
            let capacity = cfilespace_pipe(&ends, Int64(wanted))
            guard capacity > 0 else { return nil }
            (readEnd, writeEnd, self.capacity) = (ends[0], ends[1], Int(capacity))
        }

        deinit {
            close(readEnd)
            close(writeEnd)
        }
    }

    private let source: BodySource
    private let pool: BodyReaderPool
    private let budget: Budget
    private let onReady: @Sendable (PipeReadAhead) -> Void
    /// The pipe the consumer reads, and why it cannot when a restart found no new pipe (its
    /// thread only).
    private var consumerPipe: Pipe
    private var consumerFailure: FormDataError?

    private let lock = Locked()
    /// Generations, the queued fill, the waiting read, the cancel. `turn.filling`: a fill (or
    /// the finish) is queued or running; or it stopped at a full pipe (`parked`); or all but the
    /// last byte is written, which the finish writes once the rest is read (`awaitingFinish`).
    private var turn = ReadAheadTurn()
    private var pipe: Pipe
    /// The worker's side, between fills.
    private var writer: PipeBodyWriter
    /// Bytes written into the current pipe (counted after each write), and read from it (a read
    /// may take bytes before they are counted).
    private var writtenCount: UInt64 = 0
    private var readCount: UInt64 = 0
    private var parked = false
    private var awaitingFinish = false
    private var writtenAll = false
    private var failure: FormDataError?

    /// A pipe read-ahead of `source` on `pool`, or nil when `budget` has no pipe left or the
    /// system gives none; its reads start at byte `offset` of the body. `onReady` is called (with
    /// this read-ahead) on a worker thread when a read that said
    /// ``BodyReadAhead/ReadResult/wouldBlock`` can go on.
    package static func make(
        source: BodySource, pool: BodyReaderPool = .shared, budget: Budget = .pipes, from offset: UInt64 = 0,
        onReady: @escaping @Sendable (PipeReadAhead) -> Void
    ) -> PipeReadAhead? {
        let files = source.segments.count { if case .file = $0.content { true } else { false } }
        guard files <= maximumFiles, budget.take() else { return nil }
        guard let pipe = Pipe(for: source.length - min(offset, source.length)) else {
            budget.give()
            return nil
        }
        return PipeReadAhead(source: source, pipe: pipe, pool: pool, budget: budget, offset: offset, onReady: onReady)
    }

    private init(
        source: BodySource, pipe: Pipe, pool: BodyReaderPool, budget: Budget, offset: UInt64,
        onReady: @escaping @Sendable (PipeReadAhead) -> Void
    ) {
        self.source = source
        self.pool = pool
        self.budget = budget
        self.onReady = onReady
        self.pipe = pipe
        consumerPipe = pipe
        writer = PipeBodyWriter(source: source, from: offset)
    }

    deinit { budget.give() }

    /// The identity (device, inode) of the pipe the consumer reads, for tests.
    package var pipeIdentity: (device: UInt64, inode: UInt64) {
        var info = stat()
        _ = fstat(consumerPipe.readEnd, &info)
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// The descriptors of the pipe the consumer reads, for tests.
    package var pipeDescriptors: [Int32] { [consumerPipe.readEnd, consumerPipe.writeEnd] }

    /// Starts filling the pipe before the first ``read(into:capacity:)`` asks.
    package func prefetch() {
        let job = lock.withLock { scheduleIfNeeded() }
        if let job { pool.submit(job) }
    }

    /// Reads up to `capacity` bytes from the pipe into `buffer`. Never blocks.
    package func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> BodyReadAhead.ReadResult {
        if let consumerFailure { return .failed(consumerFailure) }
        while true {
            let got = Glibc.read(consumerPipe.readEnd, buffer, capacity)
            let code = errno
            if got > 0 {
                let job = lock.withLock { () -> (@Sendable () -> Void)? in
                    readCount += UInt64(got)
                    return finishIfAllRead() ?? scheduleIfNeeded()
                }
                if let job { pool.submit(job) }
                return .bytes(got)
            }
            if got < 0, code == EINTR { continue }
            // A pipe this object holds open fails no other way; if it ever did, the send fails
            // rather than spin on it.
            if got < 0, code != EAGAIN { return .failed(.fileUnreadable(path: source.firstFilePath ?? "", errno: code)) }
            // Empty (a pipe whose write end is held never says end of file).
            let (result, job) = lock.withLock { () -> (BodyReadAhead.ReadResult?, (@Sendable () -> Void)?) in
                if writtenCount > readCount { return (nil, nil) }  // written meanwhile: read again
                if let failure { return (.failed(failure), nil) }
                if writtenAll || turn.cancelled { return (.end, nil) }
                turn.consumerWaiting = true
                return (.wouldBlock, finishIfAllRead() ?? scheduleIfNeeded())
            }
            if let job { pool.submit(job) }
            if let result { return result }
        }
    }

    /// Starts again from byte `offset` of the body, in a new pipe (what the old one holds is
    /// dropped with it); the next ``read(into:capacity:)`` may say ``BodyReadAhead/ReadResult/wouldBlock``.
    package func restart(at offset: UInt64) {
        let fresh = Pipe(for: source.length - min(offset, source.length))
        let job = lock.withLock { () -> (@Sendable () -> Void)? in
            turn.restart()
            (writtenCount, readCount, writtenAll, parked) = (0, 0, false, false)
            (awaitingFinish, failure) = (false, nil)
            writer = PipeBodyWriter(source: source, from: offset)
            guard let fresh else {
                failure = .fileUnreadable(path: source.firstFilePath ?? "", errno: EMFILE)
                return nil
            }
            pipe = fresh
            return scheduleIfNeeded()
        }
        if let fresh {
            consumerPipe = fresh
            consumerFailure = nil
        } else {
            consumerFailure = .fileUnreadable(path: source.firstFilePath ?? "", errno: EMFILE)
        }
        if let job { pool.submit(job) }
    }

    /// Stops reading: no more fills, no more `onReady`. A worker in a fill stops and drops it.
    package func cancel() {
        lock.withLock { turn.cancel() }
    }

    // MARK: - Workers

    /// A job that fills the pipe, when one should run now (under the lock): none is queued or
    /// running, the body is not all written, and a fill that stopped at a full pipe has seen
    /// the consumer read it down to half.
    private func scheduleIfNeeded() -> (@Sendable () -> Void)? {
        guard !turn.filling, !awaitingFinish, !turn.cancelled, !writtenAll, failure == nil else { return nil }
        if parked {
            let buffered = writtenCount > readCount ? writtenCount - readCount : 0
            guard buffered <= UInt64(pipe.capacity / 2) else { return nil }
            parked = false
        }
        turn.filling = true
        return fillJob()
    }

    /// The finish, once all but the last byte is written and the consumer has read all of it
    /// (under the lock): queued at once, so the last byte is usually in the pipe by the time
    /// libcurl has sent what it just read, and the transfer never pauses for it.
    private func finishIfAllRead() -> (@Sendable () -> Void)? {
        guard awaitingFinish, !turn.cancelled, readCount >= writtenCount else { return nil }
        awaitingFinish = false
        turn.filling = true
        return finishJob()
    }

    private func fillJob() -> @Sendable () -> Void {
        let generation = turn.generation
        return { [self] in fill(generation: generation) }
    }

    /// Writes the body into the pipe from where the last fill stopped until the pipe is full,
    /// a pipe's worth has moved or all but the last byte is in (on a worker thread).
    private func fill(generation: Int) {
        let claimed = lock.withLock { () -> (Pipe, PipeBodyWriter)? in
            guard turn.isCurrent(generation) else { return nil }
            return (self.pipe, self.writer)
        }
        guard let claimed else { return }
        let pipe = claimed.0
        var writer = claimed.1
        var outcome = PipeBodyWriter.Outcome.stale
        var error: FormDataError?
        do throws(FormDataError) {
            outcome = try writer.write(into: pipe.writeEnd, capacity: pipe.capacity) { publish($0, generation: generation) }
        } catch let failed {
            error = failed
        }
        let (wake, next) = lock.withLock { () -> (Bool, (@Sendable () -> Void)?) in
            guard turn.isCurrent(generation) else { return (false, nil) }
            self.writer = writer
            turn.filling = false
            switch (error, outcome) {
            case (let error?, _): failure = error
            case (nil, .done): writtenAll = true
            case (nil, .pipeFull): parked = true
            case (nil, .yielded):
                turn.filling = true
                return (false, fillJob())
            case (nil, .heldLastByte):
                awaitingFinish = true
                return (false, finishIfAllRead())
            case (nil, .stale): break
            }
            let wake = (error != nil || writtenAll) && turn.takeWaitingConsumer()
            // The consumer may have emptied the pipe while this fill stopped.
            return (wake, scheduleIfNeeded())
        }
        if wake { onReady(self) }
        if let next { pool.submit(next) }
    }

    /// A job that checks every file once more and writes the body's last byte (on a worker).
    private func finishJob() -> @Sendable () -> Void {
        let generation = turn.generation
        return { [self] in
            let claimed = lock.withLock { () -> (Pipe, PipeBodyWriter)? in
                turn.isCurrent(generation) ? (self.pipe, self.writer) : nil
            }
            guard let (pipe, writer) = claimed else { return }
            var error: FormDataError?
            do throws(FormDataError) { try writer.finish(into: pipe.writeEnd) } catch let failed { error = failed }
            let wake = lock.withLock { () -> Bool in
                guard turn.isCurrent(generation) else { return false }
                turn.filling = false
                if let error { failure = error } else { (writtenCount, writtenAll) = (writtenCount + 1, true) }
                return turn.takeWaitingConsumer()
            }
            if wake { onReady(self) }
        }
    }

    /// Counts `count` more bytes in the pipe and wakes a waiting consumer; false when the
    /// read-ahead was restarted or cancelled meanwhile (the fill stops).
    private func publish(_ count: Int, generation: Int) -> Bool {
        let (current, wake) = lock.withLock { () -> (Bool, Bool) in
            guard turn.isCurrent(generation) else { return (false, false) }
            writtenCount += UInt64(count)
            return (true, turn.takeWaitingConsumer())
        }
        if wake { onReady(self) }
        return current
    }
}

extension BodySource {
    /// The path of the first file part (for an error about the pipe that carries the body).
    fileprivate var firstFilePath: String? {
        for segment in segments { if case .file(let range) = segment.content { return range.path } }
        return nil
    }
}
#endif
