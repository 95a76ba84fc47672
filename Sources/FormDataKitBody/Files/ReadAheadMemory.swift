import FormDataKitWire
import Foundation

/// Memory for ``BodyReadAhead`` chunks, kept between bodies so that each send does not map fresh
/// pages.
///
/// A chunk of 128 KiB or more is above glibc's `malloc` mapping threshold: without this, every
/// read-ahead mapped its chunks anew and the first read into them page-faulted and zeroed each
/// page (a tenth of the CPU of 200 sends of 1 MiB). Chunks are handed out by size class (a power
/// of two, at least 16 KiB); a returned chunk is kept while the kept ones hold at most
/// ``keptByteLimit`` bytes, and freed otherwise.
package final class ReadAheadMemory: @unchecked Sendable {
    // `@unchecked`: `kept` and `keptBytes` are touched only under `lock`.

    /// The memory every read-ahead uses.
    package static let shared = ReadAheadMemory(keptByteLimit: 8 << 20)

    /// The most bytes kept for reuse (8 MiB for ``shared``: sixteen chunks of 512 KiB).
    let keptByteLimit: Int

    private let lock = Locked()
    /// The kept chunks by size class: index `n` holds chunks of `1 << n` bytes. (An array, not a
    /// dictionary: a dictionary's in-place update allocated twice per take.)
    private var kept: [[UnsafeMutableRawPointer]] = Array(repeating: [], count: ReadAheadMemory.sizeClassCount)
    private var keptBytes = 0

    /// Size classes up to 1 TiB (`1 << 40`); a larger chunk is never kept.
    private static let sizeClassCount = 41

    /// A store that keeps at most `keptByteLimit` bytes of returned chunks.
    init(keptByteLimit: Int) {
        self.keptByteLimit = max(0, keptByteLimit)
    }

    deinit {
        for pointers in kept { for pointer in pointers { pointer.deallocate() } }
    }

    /// The index in `kept` of chunks of `capacity` bytes, or nil when such chunks are not kept.
    private static func sizeClass(of capacity: Int) -> Int? {
        guard capacity > 0, capacity.nonzeroBitCount == 1, capacity.trailingZeroBitCount < sizeClassCount else { return nil }
        return capacity.trailingZeroBitCount
    }

    /// The size class of a chunk of `byteCount` bytes: the power of two at or above it, at least
    /// 16 KiB (beyond 1 TiB, the count itself: no power of two to round to past `Int`'s range).
    static func capacity(for byteCount: Int) -> Int {
        let wanted = max(16 << 10, byteCount)
        guard wanted <= 1 << 40 else { return wanted }
        return wanted.nonzeroBitCount == 1 ? wanted : 1 << (Int.bitWidth - (wanted - 1).leadingZeroBitCount)
    }

    /// The bytes kept for reuse now (for tests).
    var keptByteCount: Int { lock.withLock { keptBytes } }

    /// Memory for at least `byteCount` bytes, aligned to 16; give it back with ``give(_:capacity:)``
    /// and the `capacity` returned here.
    package func take(byteCount: Int) -> (memory: UnsafeMutableRawPointer, capacity: Int) {
        let capacity = Self.capacity(for: byteCount)
        var reused: UnsafeMutableRawPointer?
        if let index = Self.sizeClass(of: capacity) {
            reused = lock.withLock { () -> UnsafeMutableRawPointer? in
                guard let pointer = kept[index].popLast() else { return nil }
                keptBytes -= capacity
                return pointer
            }
        }
        return (reused ?? UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16), capacity)
    }

    /// Returns memory from ``take(byteCount:)``: kept for the next read-ahead, or freed when
    /// enough is kept already.
    package func give(_ memory: UnsafeMutableRawPointer, capacity: Int) {
        var keep = false
        if let index = Self.sizeClass(of: capacity) {
            keep = lock.withLock { () -> Bool in
                guard keptBytes + capacity <= keptByteLimit else { return false }
                kept[index].append(memory)
                keptBytes += capacity
                return true
            }
        }
        if !keep { memory.deallocate() }
    }
}
