import FormDataKitWire
import CZlib
import Foundation

/// Compresses a ``BodySource`` into one gzip member on several threads (pigz-style), with
/// bounded memory.
///
/// The body is cut into blocks of ``blockSize`` bytes. Each block is raw-deflated on its own by a
/// worker thread, primed with the 32 KiB of input before it as the deflate dictionary, and ended
/// with a sync flush (the last one with `Z_FINISH`), so the compressed blocks join into one
/// deflate stream that refers back exactly as far as a single stream could. The calling thread
/// reads the body, hands blocks to the workers, and writes their output in order between a
/// 10-byte gzip header and the trailer (the CRC-32 of the whole body, combined from the blocks'
/// CRCs with `crc32_combine`, and the length modulo 2³²) — one valid gzip member (RFC 1952).
///
/// Adaptive compression works per block: a block never mixes levels, so it is cut short where
/// the level changes (at most one extra sync marker, 4–5 bytes, per change).
///
/// The workers are the threads asked for, clamped (``workerCount(requested:length:blockSize:processors:)``,
/// the one place the count is bounded) to the active processors and to the number of blocks the
/// body cuts into: asking for 20,000 on a two-core machine starts two.
///
/// At most ``maxBlocksInFlight`` (workers + 1) blocks wait for or are in compression; with the
/// block being filled and the one after it, memory stays at about `(workers + 3) × 2 × blockSize`
/// (input and output) plus zlib's state per worker and level — about 4 MiB on two threads —
/// whatever the body size. Every zlib return code is checked.
final class ParallelGzipCompressor: @unchecked Sendable {
    /// The default block size: 256 KiB. Each block costs 5 bytes of sync marker and the work of
    /// priming 32 KiB of dictionary; smaller blocks keep memory lower (a 1 GiB body compresses
    /// in a 31 MiB process with 256 KiB blocks, 34 MiB with 512 KiB).
    static let defaultBlockSize = 1 << 18

    /// Worker threads asked for (at least 1).
    let requestedThreads: Int
    /// The active processors the worker count is clamped to.
    let processors: Int
    /// The most input bytes per block.
    let blockSize: Int
    /// Worker threads started for the body being compressed (0 before ``compress(_:settings:into:)``).
    private(set) var threads = 0
    /// The most blocks handed to workers and not yet written (workers + 1).
    private(set) var maxBlocksInFlight = 0

    // Shared with the workers, guarded by `condition`.
    private let condition = NSCondition()
    private var pending: [GzipBlock] = []
    private var finished: [Int: GzipBlock] = [:]
    private var failure: FormDataError?
    private var stopping = false
    private var liveWorkers = 0

    // The calling thread's own state.
    private var free: [GzipBlock] = []
    private var allocated = 0
    private var inFlight = 0
    private var nextToWrite = 0
    private var crc: UInt = 0
    private var summary = CompressionSummary(bytesIn: 0, bytesOut: 0, levelChanges: 0)
    private var lastWrittenLevel: Int32?

    /// A compressor for one body with up to `threads` workers (at least 1; clamped to
    /// `processors` and the body's blocks) and blocks of `blockSize` bytes (at least 1).
    init(threads: Int, blockSize: Int = defaultBlockSize, processors: Int = ProcessInfo.processInfo.activeProcessorCount) {
        requestedThreads = max(1, threads)
        self.blockSize = max(1, blockSize)
        self.processors = max(1, processors)
    }

    /// The workers started for a body of `length` bytes: `requested`, at most `processors` (more
    /// threads than cores only add switching) and at most the number of `blockSize`-byte blocks
    /// the body cuts into (a worker with no block does nothing); at least 1.
    /// - Parameters:
    ///   - requested: the threads asked for.
    ///   - length: the body's length in bytes.
    ///   - blockSize: the most input bytes per block.
    ///   - processors: the active processors.
    /// - Returns: the worker count.
    static func workerCount(requested: Int, length: UInt64, blockSize: Int, processors: Int) -> Int {
        let size = UInt64(max(1, blockSize))
        let blocks = length / size + (length % size == 0 ? 0 : 1)
        return Int(min(UInt64(max(1, requested)), UInt64(max(1, processors)), max(1, blocks)))
    }

    /// Compresses `source` with `settings` (its level and adaptive flag), passing the gzip stream
    /// to `sink` piece by piece on the calling thread. Use each compressor once.
    func compress(
        _ source: BodySource, settings: CompressionSettings, into sink: GzipDeflater.Sink
    ) throws(FormDataError) -> CompressionSummary {
        try ZlibSupport.validate(level: settings.level)
        let chosen = ZlibSupport.effectiveLevel(settings.level)
        threads = Self.workerCount(requested: requestedThreads, length: source.length, blockSize: blockSize, processors: processors)
        maxBlocksInFlight = threads + 1
        startWorkers()
        defer { shutDown() }
        try write(Self.header(level: chosen), into: sink)

        let reader = source.makeReader(chunkSize: BodyCompressor.readSize)
        var sequence = 0
        var block = try takeBlock(into: sink)
        block.reset(after: nil, sequence: sequence, level: chosen)
        var currentSegment = -1
        var submittedLast = false
        while true {
            let space = block.freeSpace
            let count = try reader.read(into: space)
            if count == 0 { break }
            var wanted = block.level
            if settings.adaptive && reader.segmentIndex != currentSegment {
                currentSegment = reader.segmentIndex
                if let level = BodyCompressor.level(for: source.segments[currentSegment], chosen: chosen) { wanted = level }
            }
            if wanted == block.level {
                block.count += count
            } else if block.count == 0 {
                block.level = wanted
                block.count = count
            } else {
                // A new level: these bytes start the next block.
                sequence += 1
                let next = try takeBlock(into: sink)
                next.reset(after: block, sequence: sequence, level: wanted)
                next.append(space.baseAddress!, byteCount: count)
                try submit(block, into: sink)
                block = next
            }
            if block.count == block.capacity {
                if reader.isAtEnd {
                    block.isLast = true
                    try submit(block, into: sink)
                    submittedLast = true
                    break
                }
                sequence += 1
                let next = try takeBlock(into: sink)
                next.reset(after: block, sequence: sequence, level: block.level)
                try submit(block, into: sink)
                block = next
            }
        }
        if !submittedLast {
            // Possibly empty: an empty final block is still a valid end of the deflate stream.
            block.isLast = true
            try submit(block, into: sink)
        }
        try drain(keepingAtMost: 0, into: sink)
        try write(Self.trailer(crc: crc, length: summary.bytesIn), into: sink)
        return summary
    }

    // MARK: - Gzip framing (RFC 1952)

    /// The 10-byte member header zlib writes: magic, deflate, no flags, no time, the extra flags
    /// for `level` (2 = slowest, 4 = fastest), OS 3 (Unix).
    static func header(level: Int32) -> [UInt8] {
        let extraFlags: UInt8 = level == 9 ? 2 : (level < 2 ? 4 : 0)
        return [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, extraFlags, 0x03]
    }

    /// The 8-byte trailer: CRC-32 and the input length modulo 2³², both little-endian.
    static func trailer(crc: UInt, length: UInt64) -> [UInt8] {
        let crc32 = UInt32(truncatingIfNeeded: crc)
        let size = UInt32(truncatingIfNeeded: length)
        return (0..<4).map { UInt8(truncatingIfNeeded: crc32 >> (8 * $0)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
    }

    // MARK: - The calling thread

    private func write(_ bytes: [UInt8], into sink: GzipDeflater.Sink) throws(FormDataError) {
        let failure: FormDataError? = bytes.withUnsafeBytes { raw in
            do throws(FormDataError) { try sink(raw) } catch { return error }
            return nil
        }
        if let failure { throw failure }
        summary.bytesOut += UInt64(bytes.count)
    }

    /// A block to fill: a recycled one, a new one while under the limit, or else the next one
    /// the writer frees.
    private func takeBlock(into sink: GzipDeflater.Sink) throws(FormDataError) -> GzipBlock {
        while true {
            if let block = free.popLast() { return block }
            if allocated < maxBlocksInFlight + 2 {
                allocated += 1
                return GzipBlock(capacity: blockSize)
            }
            try drain(keepingAtMost: inFlight - 1, into: sink)
        }
    }

    /// Hands `block` to the workers, then writes what is ready, waiting while too many blocks are out.
    private func submit(_ block: GzipBlock, into sink: GzipDeflater.Sink) throws(FormDataError) {
        condition.lock()
        pending.append(block)
        condition.signal()
        condition.unlock()
        inFlight += 1
        try drain(keepingAtMost: maxBlocksInFlight, into: sink)
    }

    /// Writes every compressed block that is next in order, and waits for more while more than
    /// `limit` blocks are out. Throws a worker's failure.
    private func drain(keepingAtMost limit: Int, into sink: GzipDeflater.Sink) throws(FormDataError) {
        while true {
            condition.lock()
            var ready: GzipBlock?
            while true {
                if let failure {
                    condition.unlock()
                    throw failure
                }
                if let block = finished.removeValue(forKey: nextToWrite) {
                    ready = block
                    break
                }
                if inFlight <= limit { break }
                condition.wait()
            }
            condition.unlock()
            guard let block = ready else { return }
            try sink(UnsafeRawBufferPointer(rebasing: block.output[0..<block.outputCount]))
            crc = czlib_crc32_combine(crc, block.crc, Int64(block.count))
            summary.bytesIn += UInt64(block.count)
            summary.bytesOut += UInt64(block.outputCount)
            if block.count > 0 {
                if let last = lastWrittenLevel, last != block.level { summary.levelChanges += 1 }
                lastWrittenLevel = block.level
            }
            nextToWrite += 1
            inFlight -= 1
            free.append(block)
        }
    }

    // MARK: - Workers

    private func startWorkers() {
        condition.lock()
        liveWorkers = threads
        condition.unlock()
        for _ in 0..<threads {
            let thread = Thread { [self] in
                // Named from the thread itself, so the system sees it (at most 15 bytes).
                ThreadName.setCurrent("FDK.Gzip")
                work()
            }
            thread.start()
        }
    }

    /// Stops the workers (after the block each is compressing) and waits until all have exited,
    /// so no worker touches a block once this returns.
    private func shutDown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while liveWorkers > 0 { condition.wait() }
        pending.removeAll()
        finished.removeAll()
        condition.unlock()
    }

    /// A worker: compresses blocks from `pending` into `finished` until told to stop or a block fails.
    private func work() {
        let deflater = GzipBlockDeflater()
        condition.lock()
        while true {
            while pending.isEmpty && !stopping { condition.wait() }
            if stopping { break }
            let block = pending.removeFirst()
            condition.unlock()
            var error: FormDataError?
            do throws(FormDataError) { try deflater.compress(block) } catch let caught { error = caught }
            condition.lock()
            if let error {
                if failure == nil { failure = error }
                stopping = true
                break
            }
            finished[block.sequence] = block
            condition.broadcast()
        }
        liveWorkers -= 1
        condition.broadcast()
        condition.unlock()
    }
}
