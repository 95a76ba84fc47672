import CZlib
import Foundation

/// One block of a parallel gzip stream: up to 32 KiB of the input that came before it (the
/// dictionary), the block's own input, and, once compressed, its raw deflate output and CRC-32.
///
/// A block is owned by one thread at a time: the reader fills it, a worker compresses it, the
/// writer emits it and hands it back for reuse. Those hand-overs go through
/// ``ParallelGzipCompressor``'s lock, which is why the class can be `@unchecked Sendable`.
package final class GzipBlock: @unchecked Sendable {
    /// The window size of deflate: the most input a block can refer back to.
    package static let dictionaryCapacity = 32_768

    /// The most input bytes the block holds (not counting the dictionary).
    package let capacity: Int
    /// Dictionary followed by input: `dictionaryCapacity + capacity` bytes.
    let input: UnsafeMutableRawBufferPointer
    /// How many dictionary bytes are at the start of ``input``.
    var dictionaryCount = 0
    /// How many input bytes follow the dictionary.
    var count = 0
    /// The deflate level of this block (0...9).
    var level: Int32 = 6
    /// Whether this block ends the stream (it gets the final deflate block).
    var isLast = false
    /// The block's position in the stream, from 0.
    var sequence = 0

    /// The compressed output; grown when zlib needs more room.
    var output: UnsafeMutableRawBufferPointer
    /// How many bytes of ``output`` are compressed data.
    var outputCount = 0
    /// The CRC-32 of the block's input.
    var crc: UInt = 0

    /// A block for up to `capacity` input bytes.
    init(capacity: Int) {
        self.capacity = capacity
        input = .allocate(byteCount: Self.dictionaryCapacity + capacity, alignment: 16)
        output = .allocate(byteCount: capacity + capacity / 8 + 1024, alignment: 16)
    }

    deinit {
        input.deallocate()
        output.deallocate()
    }

    /// The free space after the block's input.
    var freeSpace: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: input[(dictionaryCount + count)..<(dictionaryCount + capacity)])
    }

    /// Clears the block and makes the last 32 KiB of `previous` (dictionary and input together,
    /// which is the stream just before this block) its dictionary; no dictionary when nil.
    func reset(after previous: GzipBlock?, sequence: Int, level: Int32) {
        count = 0
        outputCount = 0
        crc = 0
        isLast = false
        self.sequence = sequence
        self.level = level
        guard let previous else {
            dictionaryCount = 0
            return
        }
        let available = previous.dictionaryCount + previous.count
        dictionaryCount = min(available, Self.dictionaryCapacity)
        input.baseAddress!.copyMemory(
            from: previous.input.baseAddress! + (available - dictionaryCount), byteCount: dictionaryCount)
    }

    /// Appends `byteCount` bytes from `bytes` to the block's input (there must be room).
    func append(_ bytes: UnsafeRawPointer, byteCount: Int) {
        (input.baseAddress! + dictionaryCount + count).copyMemory(from: bytes, byteCount: byteCount)
        count += byteCount
    }

    /// Makes ``output`` at least `byteCount` bytes, keeping what it holds.
    func reserveOutput(_ byteCount: Int) {
        guard output.count < byteCount else { return }
        let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: byteCount, alignment: 16)
        larger.baseAddress!.copyMemory(from: output.baseAddress!, byteCount: outputCount)
        output.deallocate()
        output = larger
    }
}

/// A raw-deflate compressor for independent ``GzipBlock``s, one per worker thread.
///
/// Each block is deflated on its own (raw deflate, windowBits -15, so no wrapper) after
/// `deflateReset`, primed with the block's dictionary via `deflateSetDictionary`, and ended with
/// `Z_SYNC_FLUSH` (an empty stored block that byte-aligns the output, so blocks can simply be
/// joined) — or `Z_FINISH` for the last block, which sets the final-block bit. One `z_stream`
/// per level used, made on first use and reset for every block. Every zlib return code is
/// checked; a failure is ``FormDataError/compressionFailed(code:message:)``.
package final class GzipBlockDeflater {
    /// `windowBits` for raw deflate with a 32 KiB window.
    package static let rawWindowBits: Int32 = -15

    private var streams: [Int32: UnsafeMutablePointer<z_stream>] = [:]

    /// A deflater with no streams yet.
    package init() {}

    deinit {
        for stream in streams.values {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
    }

    /// Compresses `block`'s input into its output and computes its CRC-32.
    func compress(_ block: GzipBlock) throws(FormDataError) {
        let stream = try self.stream(level: block.level)
        try check(deflateReset(stream), stream)
        let base = block.input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        if block.dictionaryCount > 0 {
            try check(deflateSetDictionary(stream, base, uInt(block.dictionaryCount)), stream)
        }
        let data = base + block.dictionaryCount
        block.crc = crc32(0, data, uInt(block.count))
        stream.pointee.next_in = data
        stream.pointee.avail_in = uInt(block.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        // Room for the worst case plus the flush marker, so one call normally does it all.
        block.reserveOutput(Int(deflateBound(stream, uLong(block.count))) + 64)
        block.outputCount = 0
        let flush = block.isLast ? Z_FINISH : Z_SYNC_FLUSH
        while true {
            let room = block.output.count - block.outputCount
            stream.pointee.next_out = (block.output.baseAddress! + block.outputCount).assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(room)
            stream.pointee.msg = nil  // zlib never clears it; keep error texts current
            let code = deflate(stream, flush)
            let produced = room - Int(stream.pointee.avail_out)
            block.outputCount += produced
            switch code {
            case Z_STREAM_END:
                return
            case Z_OK:
                break
            case Z_BUF_ERROR where flush == Z_SYNC_FLUSH && produced == 0 && stream.pointee.avail_in == 0:
                // Nothing left to do: the flush completed exactly at the end of the last buffer.
                return
            default:
                throw .compressionFailed(code: code, message: ZlibSupport.message(code, stream: stream))
            }
            if flush == Z_SYNC_FLUSH && stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return }
            if stream.pointee.avail_out == 0 { block.reserveOutput(block.output.count * 2) }
        }
    }

    /// The stream for `level`, made on first use.
    private func stream(level: Int32) throws(FormDataError) -> UnsafeMutablePointer<z_stream> {
        if let stream = streams[level] { return stream }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = czlib_deflateInit2(stream, level, Z_DEFLATED, Self.rawWindowBits, ZlibSupport.memLevel, Z_DEFAULT_STRATEGY)
        guard code == Z_OK else {
            let message = ZlibSupport.message(code, stream: stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .compressionFailed(code: code, message: message)
        }
        streams[level] = stream
        return stream
    }

    private func check(_ code: Int32, _ stream: UnsafeMutablePointer<z_stream>) throws(FormDataError) {
        guard code == Z_OK else {
            throw .compressionFailed(code: code, message: ZlibSupport.message(code, stream: stream))
        }
    }
}
