#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A growable byte buffer for building in-memory body runs: appends are a bounds check and a
/// `memcpy`, and ``takeData()`` hands the bytes to a `Data` without copying them (the `Data`
/// frees the buffer). A class so that the buffer has exactly one owner.
final class ByteAccumulator {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    /// The number of bytes appended since the last ``takeData()``.
    private(set) var count = 0

    /// An empty buffer with room for `capacity` bytes.
    init(capacity: Int = 0) {
        if capacity > 0 { grow(to: capacity) }
    }

    deinit { free(base) }

    /// Makes room for at least `capacity` bytes in total.
    func reserveCapacity(_ capacity: Int) {
        if capacity > self.capacity { grow(to: capacity) }
    }

    /// Appends `bytes`.
    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        let needed = count + bytes.count
        if needed > capacity { grow(to: max(needed, capacity * 2, 256)) }
        (base! + count).copyMemory(from: source, byteCount: bytes.count)
        count = needed
    }

    /// Appends `bytes`.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(UnsafeRawBufferPointer(bytes))
    }

    /// Runs `body` on the bytes from offset `start` to the end.
    func withBytes<Result>(from start: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard let base, start < count else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: base + start, count: count - start))
    }

    /// The bytes appended so far as a `Data` that takes over the buffer; this accumulator is
    /// empty afterwards.
    func takeData() -> Data {
        guard let taken = base, count > 0 else { return Data() }
        let data = Data(bytesNoCopy: taken, count: count, deallocator: .free)
        base = nil
        capacity = 0
        count = 0
        return data
    }

    private func grow(to newCapacity: Int) {
        guard let grown = realloc(base, newCapacity) else {
            // Out of memory: there is no sensible way on with a half-built body.
            fatalError("FormDataKit: cannot allocate \(newCapacity) bytes for a request body")
        }
        base = grown
        capacity = newCapacity
    }
}
