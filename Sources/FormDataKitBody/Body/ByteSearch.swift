#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Finding a byte string inside content (used to check a boundary against content): in memory,
/// or streamed from a file range.
enum ByteSearch {
    /// How many bytes of a file ``contains(_:_:chunkSize:)`` reads at a time.
    static let fileChunkSize = 256 << 10

    /// Whether `needle` occurs in `haystack`.
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count, let base = haystack.baseAddress else { return false }
        return needle.withUnsafeBytes { pattern -> Bool in
            var start = 0
            let lastStart = haystack.count - pattern.count
            while start <= lastStart {
                guard let hit = memchr(base + start, Int32(first), lastStart - start + 1) else { return false }
                let position = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + position, pattern.baseAddress!, pattern.count) == 0 { return true }
                start = position + 1
            }
            return false
        }
    }

    /// Whether `needle` occurs in `haystack`.
    static func contains<H: ContiguousBytes>(_ haystack: H, _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { contains($0, needle) }
    }

    /// Whether `needle` occurs in the bytes of `range`, read `chunkSize` bytes at a time into one
    /// buffer of `chunkSize + needle.count - 1` bytes: the last `needle.count - 1` bytes of each
    /// chunk are kept in front of the next, so a match across a chunk border is found.
    ///
    /// - Throws: what reading the range throws (a missing, unreadable or changed file).
    static func contains(_ range: FileRange, _ needle: [UInt8], chunkSize: Int = fileChunkSize) throws(FormDataError) -> Bool {
        let file = try OpenedFileRange(range)
        guard !needle.isEmpty else { return true }
        guard range.length >= UInt64(needle.count) else { return false }
        let carryLimit = needle.count - 1
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: carryLimit + Int(min(UInt64(max(chunkSize, 1)), range.length)), alignment: 16)
        defer { buffer.deallocate() }
        var filled = 0
        while file.remaining > 0 {
            filled += try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if contains(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]), needle) { return true }
            let carry = min(carryLimit, filled)
            memmove(buffer.baseAddress!, buffer.baseAddress! + (filled - carry), carry)
            filled = carry
        }
        return false
    }
}
