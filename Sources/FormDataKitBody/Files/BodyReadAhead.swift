import FormDataKitWire
import Foundation

/// The one body reader: reads a body ahead of the thread that sends it, so that thread never
/// touches a file. Every streaming transport reads its bodies here (``CurlTransport``'s read
/// callback, the AsyncHTTPClient transport's body writer).
///
/// ``read(into:capacity:)`` only copies bytes that a ``BodyReaderPool`` worker has already read,
/// and says ``ReadResult/wouldBlock`` when there are none yet. The transport then pauses (curl)
/// or waits (NIO's demand); when the worker has read more it calls `onReady`, and the transport
/// resumes on its own thread. Every `open`, `fstat`, `read` and `close` of a body's files runs on
/// the pool, through the ``FileOpening`` given: the readers are let go there too, never where the
/// transport lets the read-ahead go. Each file's size is checked before its last chunk goes
/// (``OpenedFileRange``): a file that changed size fails the read, never sends a wrong body.
/// A stream segment (``StreamedContent``) is read the same way, on a worker (a read may wait for the
/// stream), its declared length checked before its last bytes go (``StreamSegmentReader``).
///
/// Memory is bounded: two chunks of `chunkSize` bytes (or of the body's length, when shorter),
/// taken on first use from ``ReadAheadMemory`` and given back to it at the end. A worker fills a
/// free chunk while the other is copied out; one worker at a time reads a given body, in order.
/// A body held wholly in memory is copied directly, without a worker. ``restart(at:)`` (libcurl
/// rewinding the body, a retry) and ``cancel()`` abandon a read in progress: a worker stuck in
/// it keeps its chunk until it returns, then drops what it read.
package final class BodyReadAhead: @unchecked Sendable {
    // `@unchecked`: every stored variable below `lock` is guarded by it; a chunk's memory is
    // written only by the one worker that marked it `filling`, and read only under the lock.

    /// What a read gives.
    package enum ReadResult: Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// The body has been read to its end.
        case end
        /// Nothing is ready yet: `onReady` will be called once something is (bytes, the end or
        /// an error), unless the read-ahead is restarted or cancelled first.
        case wouldBlock
        /// Reading the body failed (a file changed size, vanished, or is not a regular file).
        case failed(FormDataError)
    }

    private enum ChunkState {
        case free
        case filling
        case ready
    }

    private struct Chunk {
        var memory: UnsafeMutableRawPointer?
        /// The size class `memory` came from (``ReadAheadMemory``).
        var capacity = 0
        var state = ChunkState.free
        var count = 0
        var consumed = 0
    }

    private let source: BodySource
    private let chunkSize: Int
    private let pool: BodyReaderPool
    private let files: any FileOpening
    private let memory: ReadAheadMemory
    private let onReady: @Sendable (BodyReadAhead) -> Void
    /// The reader of a body held in memory (the consumer's thread only).
    private var memoryReader: BodyReader?

    private let lock = Locked()
    /// Generations, the queued job, the waiting read, the cancel.
    private var turn = ReadAheadTurn()
    private var chunks = [Chunk(), Chunk()]
    /// The chunks ready to copy out, in body order.
    private var readyOrder: [Int] = []
    /// The reader the next fill continues with (nil: make one at `readerOffset`).
    private var reader: BodyReader?
    private var readerOffset: UInt64 = 0
    private var reachedEnd = false
    private var failure: FormDataError?

    /// A read-ahead of `source` in chunks of `chunkSize` bytes on `pool`, its files opened and
    /// closed by `files`; `onReady` is called (with this read-ahead) on a worker thread when a
    /// read that said ``ReadResult/wouldBlock`` can go on.
    package init(
        source: BodySource, chunkSize: Int, pool: BodyReaderPool = .shared, memory: ReadAheadMemory = .shared,
        files: any FileOpening = SystemFileOpening(), onReady: @escaping @Sendable (BodyReadAhead) -> Void
    ) {
        self.source = source
        let wanted = UInt64(max(1, chunkSize))
        self.chunkSize = Int(clamping: source.isLengthKnown ? min(wanted, max(1, source.length)) : wanted)
        self.pool = pool
        self.memory = memory
        self.files = files
        self.onReady = onReady
        if source.isInMemory { memoryReader = source.makeReader() }
    }

    deinit {
        for chunk in chunks { if let pointer = chunk.memory { memory.give(pointer, capacity: chunk.capacity) } }
    }

    /// Starts reading before the first ``read(into:capacity:)`` asks (nothing for a body in memory).
    package func prefetch() {
        guard memoryReader == nil else { return }
        let job = lock.withLock { scheduleIfNeeded() }
        if let job { pool.submit(job) }
    }

    /// Copies up to `capacity` ready bytes into `buffer`. Never blocks on a file.
    package func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> ReadResult {
        if let memoryReader { return readFromMemory(memoryReader, into: buffer, capacity: capacity) }
        let (result, job) = lock.withLock { () -> (ReadResult, (@Sendable () -> Void)?) in
            var copied = 0
            while copied < capacity, let index = readyOrder.first {
                let available = chunks[index].count - chunks[index].consumed
                let count = min(available, capacity - copied)
                (buffer + copied).copyMemory(from: chunks[index].memory! + chunks[index].consumed, byteCount: count)
                copied += count
                chunks[index].consumed += count
                if chunks[index].consumed == chunks[index].count {
                    chunks[index].state = .free
                    readyOrder.removeFirst()
                }
            }
            let job = scheduleIfNeeded()
            if copied > 0 { return (.bytes(copied), job) }
            if let failure { return (.failed(failure), job) }
            if reachedEnd || turn.cancelled { return (.end, job) }
            turn.consumerWaiting = true
            return (.wouldBlock, job)
        }
        if let job { pool.submit(job) }
        return result
    }

    /// Starts again from byte `offset` of the body (libcurl rewinding for a re-send). What was
    /// read ahead is dropped; the next ``read(into:capacity:)`` may say ``ReadResult/wouldBlock``.
    package func restart(at offset: UInt64) {
        for stream in source.streams { stream.cancelReads() }
        if memoryReader != nil {
            memoryReader = Self.reader(of: source, from: offset, chunkSize: chunkSize, files: files)
            return
        }
        let (job, dropped) = lock.withLock { () -> ((@Sendable () -> Void)?, BodyReader?) in
            turn.restart()
            for index in readyOrder { chunks[index].state = .free }
            readyOrder = []
            defer { reader = nil }
            readerOffset = offset
            reachedEnd = false
            failure = nil
            return (scheduleIfNeeded(), reader)
        }
        letGo(dropped)
        if let job { pool.submit(job) }
    }

    /// Stops reading: no more jobs, no more `onReady`. A worker in a read finishes it and drops
    /// it; the files of the reader kept between fills are closed on the pool.
    package func cancel() {
        for stream in source.streams { stream.cancelReads() }
        let dropped = lock.withLock { () -> BodyReader? in
            turn.cancel()
            defer { reader = nil }
            return reader
        }
        letGo(dropped)
    }

    /// Lets `reader` (and its open file) go in a job on the pool: a close may wait.
    private func letGo(_ reader: BodyReader?) {
        guard let reader else { return }
        let held = HeldReader(reader)
        pool.submit { held.reader = nil }
    }

    // MARK: - Workers

    /// A job filling the next free chunk, when one should run now (under the lock).
    private func scheduleIfNeeded() -> (@Sendable () -> Void)? {
        guard !turn.filling, !turn.cancelled, !reachedEnd, failure == nil, chunks.contains(where: { $0.state == .free }) else {
            return nil
        }
        turn.filling = true
        let generation = turn.generation
        return { [self] in fill(generation: generation) }
    }

    /// Fills one free chunk (on a worker thread), then queues the next fill while the body has
    /// more and a chunk is free (queued, not looped, so bodies take turns on the workers).
    private func fill(generation: Int) {
        let claim = lock.withLock { () -> (index: Int, reader: BodyReader, memory: UnsafeMutableRawPointer, offset: UInt64)? in
            guard turn.isCurrent(generation), let index = chunks.firstIndex(where: { $0.state == .free }) else {
                if turn.isCurrent(generation) { turn.filling = false }
                return nil
            }
            chunks[index].state = .filling
            if chunks[index].memory == nil {
                let taken = memory.take(byteCount: chunkSize)
                chunks[index].memory = taken.memory
                chunks[index].capacity = taken.capacity
            }
            let reader = self.reader ?? Self.reader(of: source, from: readerOffset, chunkSize: chunkSize, files: files)
            self.reader = nil
            return (index, reader, chunks[index].memory!, readerOffset)
        }
        guard let claim else { return }

        var filled = 0
        var atEnd = false
        var readError: FormDataError?
        do throws(FormDataError) {
            // A fill stops after a few files read to their end: they are closed once it is handed on.
            while filled < chunkSize, claim.reader.finishedFileCount < Self.finishedFilesPerFill {
                let got = try claim.reader.read(
                    into: UnsafeMutableRawBufferPointer(start: claim.memory + filled, count: chunkSize - filled))
                filled += got
                if got == 0 || claim.offset + UInt64(filled) == source.knownLength {
                    atEnd = true
                    break
                }
                // A stream's bytes go as they come: the next read may wait for the stream.
                if claim.reader.lastChunkFromStream { break }
            }
        } catch {
            readError = error
        }

        let finished = claim.reader.takeFinishedFiles()
        let (wake, next) = lock.withLock { () -> (Bool, (@Sendable () -> Void)?) in
            guard turn.isCurrent(generation) else {
                // Restarted or cancelled meanwhile: the chunk is free again, the bytes are dropped.
                chunks[claim.index].state = .free
                return (false, scheduleIfNeeded())
            }
            turn.filling = false
            if filled > 0 {
                chunks[claim.index].state = .ready
                chunks[claim.index].count = filled
                chunks[claim.index].consumed = 0
                readyOrder.append(claim.index)
            } else {
                chunks[claim.index].state = .free
            }
            readerOffset += UInt64(filled)
            // Kept for the next fill; at the end (or a failure) let go here, on the worker.
            if !atEnd && readError == nil { reader = claim.reader }
            if atEnd { reachedEnd = true }
            if let readError { failure = readError }
            let wake = (filled > 0 || atEnd || readError != nil) && turn.takeWaitingConsumer()
            return (wake, scheduleIfNeeded())
        }
        // The files read to their end, and a reader not kept, are let go only after the wake-up
        // and the next fill's job: closing a file may wait.
        withExtendedLifetime((claim.reader, finished)) {
            if wake { onReady(self) }
            if let next { pool.submit(next) }
        }
    }

    // MARK: - Bodies in memory, and positioned readers

    private func readFromMemory(_ reader: BodyReader, into buffer: UnsafeMutableRawPointer, capacity: Int) -> ReadResult {
        var copied = 0
        // In-memory segments cannot fail.
        while copied < capacity,
            let got = try? reader.read(into: UnsafeMutableRawBufferPointer(start: buffer + copied, count: capacity - copied)),
            got > 0
        {
            copied += got
        }
        return copied > 0 ? .bytes(copied) : .end
    }

    /// A reader of `source` from byte `offset` on: the segments before it are skipped and the
    /// one it falls in is cut, so nothing is read to get there. A body with streams is read
    /// from its start only (a stream cannot be skipped into): from another offset the reader fails.
    static func reader(
        of source: BodySource, from offset: UInt64, chunkSize: Int, files: any FileOpening = SystemFileOpening()
    ) -> BodyReader {
        if offset > 0, let stream = source.streams.first {
            let refused = FormDataError.streamNotReplayable(field: stream.field, reason: "the body would be sent from byte \(offset)")
            return BodyReader(source: source, chunkSize: chunkSize, files: files, failure: refused)
        }
        return (offset > 0 ? source.suffix(from: offset) : source).makeReader(chunkSize: chunkSize, files: files, keepsFinishedFiles: true)
    }

    /// The most files one fill reads to their end (and keeps open until it is handed on).
    static let finishedFilesPerFill = 8
}

/// A reader handed to the pool job that lets it go (it is touched there only).
private final class HeldReader: @unchecked Sendable {
    var reader: BodyReader?

    init(_ reader: BodyReader) { self.reader = reader }
}
