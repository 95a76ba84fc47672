#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Finding a byte string inside in-memory content (used to check a boundary against content).
package enum ByteSearch {
    /// Whether `needle` occurs in `haystack`.
    package static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
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
    package static func contains<H: ContiguousBytes>(_ haystack: H, _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { contains($0, needle) }
    }
}
