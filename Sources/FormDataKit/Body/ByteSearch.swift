#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Finding a byte string inside in-memory content (used to check a boundary against content).
package enum ByteSearch {
    /// Whether `needle` occurs in `haystack`.
    package static func contains<H: DataProtocol>(_ haystack: H, _ needle: [UInt8]) -> Bool
    where H: ContiguousBytes {
        guard let first = needle.first, haystack.count >= needle.count else { return needle.isEmpty }
        return haystack.withUnsafeBytes { hay -> Bool in
            needle.withUnsafeBytes { pattern -> Bool in
                guard let base = hay.baseAddress else { return false }
                var start = 0
                let lastStart = hay.count - pattern.count
                while start <= lastStart {
                    guard let hit = memchr(base + start, Int32(first), lastStart - start + 1) else { return false }
                    let position = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + position, pattern.baseAddress!, pattern.count) == 0 { return true }
                    start = position + 1
                }
                return false
            }
        }
    }
}
