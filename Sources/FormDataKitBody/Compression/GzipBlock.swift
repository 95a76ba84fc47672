import FormDataKitWire
import Foundation

/// One block of a parallel gzip stream: up to 32 KiB of the input that came before it (the
/// dictionary), the block's own input, and, once compressed, its raw deflate output and CRC-32.
///
/// A block is owned by one thread at a time: the reader fills it, a worker compresses it, the
/// writer emits it and hands it back for reuse. Those hand-overs go through
/// ``ParallelGzipCompressor``'s lock, which is why the class can be `@unchecked Sendable`.
final class GzipBlock: @unchecked Sendable {
    /// The window size of deflate: the most input a block can refer back to.
    static let dictionaryCapacity = 32_768

    /// The most input bytes the block holds (not counting the dictionary).
    let capacity: Int
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
