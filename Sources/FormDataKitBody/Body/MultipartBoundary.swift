import FormDataKitWire
import CFileSpace
import Foundation

/// Multipart boundaries for both façades: the shapes they generate, the one RFC 2046 check, and
/// the delimiter content is checked against.
package enum MultipartBoundary {
    /// The shape of a generated boundary.
    package enum Style: Sendable {
        /// ASIHTTPRequest's: `0xKhTmLbOuNdArY-` + an uppercase UUID (52 characters, 122 random bits).
        case asi
        /// AFNetworking's: `Boundary+` + two 32-bit random values as 8 uppercase hex digits each
        /// (25 characters, so the body length does not depend on the random part).
        case afNetworking
    }

    /// The prefix ASIHTTPRequest put before the UUID.
    static let asiPrefix = "0xKhTmLbOuNdArY-"

    /// A new random boundary of `style`.
    ///
    /// A generated boundary is checked against in-memory content only (and replaced on a hit);
    /// file contents are not scanned for it: the chance that a file contains it is negligible. A
    /// boundary the caller fixes is checked against files too.
    /// - Parameter style: the shape.
    /// - Returns: the boundary.
    package static func make(_ style: Style) -> String {
        switch style {
        case .asi:
            return asiPrefix + randomUUIDString()
        case .afNetworking:
            var values: (UInt32, UInt32) = (0, 0)
            withUnsafeMutableBytes(of: &values) { randomBytes.fill($0) }
            return "Boundary+" + hex8(values.0) + hex8(values.1)
        }
    }

    /// ``make(_:)`` in ASIHTTPRequest's shape.
    package static func makeASIBoundary() -> String { make(.asi) }

    /// The bytes that must not occur in content: `--` + boundary.
    static func delimiter(_ boundary: String) -> [UInt8] {
        Array("--\(boundary)".utf8)
    }

    /// Whether `boundary` is 1–70 of RFC 2046's boundary characters (letters, digits,
    /// `'()+_,-./:=?` and space, not last): it goes unquoted into `Content-Type`.
    package static func isValid(_ boundary: String) -> Bool {
        let bytes = boundary.utf8
        return (1...70).contains(bytes.count) && bytes.last != UInt8(ascii: " ")
            && !boundary.containsUTF8Byte { !boundaryBytes.contains($0) }
    }

    /// Throws ``FormDataError/invalidHeaderValue(field:value:)`` unless ``isValid(_:)``.
    static func requireValid(_ boundary: String) throws(FormDataError) {
        if !isValid(boundary) { throw .invalidHeaderValue(field: "(multipart boundary)", value: boundary) }
    }

    /// RFC 2046's `bchars`: letters, digits, `'()+_,-./:=?` and space.
    private static let boundaryBytes = ASCIIByteSet(alphanumericsAnd: "'()+_,-./:=? ")

    /// A random (version 4) UUID in its uppercase 8-4-4-4-12 text form, from the system's
    /// random source: Foundation's `UUID()` opens and reads `/dev/urandom` each time on Linux.
    private static func randomUUIDString() -> String {
        var bytes: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &bytes) { randomBytes.fill($0) }
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
            return String(unsafeUninitializedCapacity: 36) { text in
                var out = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[out] = UInt8(ascii: "-")
                        out += 1
                    }
                    text[out] = hexDigit(raw[index] >> 4)
                    text[out + 1] = hexDigit(raw[index] & 0x0F)
                    out += 2
                }
                return out
            }
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x37 + value }

    /// Random bytes for boundaries, drawn from the system a page at a time: one `getrandom`
    /// call per 256 boundaries instead of one per boundary (a syscall on every small send).
    private static let randomBytes = RandomBytePool()

    /// Fills `buffer` from the system's random source: one `getrandom` call on Linux (a signal
    /// can cut a call of more than 256 bytes short: then, as elsewhere, the system generator, 8
    /// bytes at a time).
    fileprivate static func fillFromSystem(_ buffer: UnsafeMutableRawBufferPointer) {
        if cfilespace_random(buffer.baseAddress, Int64(buffer.count)) == 0 { return }
        var generator = SystemRandomNumberGenerator()
        var offset = 0
        while offset < buffer.count {
            var value: UInt64 = generator.next()
            let count = min(8, buffer.count - offset)
            withUnsafeBytes(of: &value) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: count) }
            offset += count
        }
    }

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

/// Bytes from the system's random source, drawn ``size`` at a time and handed out once each,
/// safe from any thread.
private final class RandomBytePool: @unchecked Sendable {
    // `@unchecked`: `buffer` and `used` are touched only under `lock`.
    static let size = 4096
    private let lock = Locked()
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: RandomBytePool.size, alignment: 8)
    private var used = RandomBytePool.size

    /// Fills `target` (at most ``size`` bytes) with bytes no other caller gets.
    func fill(_ target: UnsafeMutableRawBufferPointer) {
        lock.withLock {
            if used + target.count > Self.size {
                MultipartBoundary.fillFromSystem(buffer)
                used = 0
            }
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[used..<used + target.count]))
            // Handed out once: the bytes are not kept where a later caller could see them again.
            (buffer.baseAddress! + used).initializeMemory(as: UInt8.self, repeating: 0, count: target.count)
            used += target.count
        }
    }
}
