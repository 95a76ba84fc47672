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
    package static let asiPrefix = "0xKhTmLbOuNdArY-"

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
            var generator = SystemRandomNumberGenerator()
            return "Boundary+" + hex8(generator.next()) + hex8(generator.next())
        }
    }

    /// ``make(_:)`` in ASIHTTPRequest's shape.
    package static func makeASIBoundary() -> String { make(.asi) }

    /// The bytes that must not occur in content: `--` + boundary.
    package static func delimiter(_ boundary: String) -> [UInt8] {
        Array("--\(boundary)".utf8)
    }

    /// Whether `boundary` is 1–70 of RFC 2046's boundary characters (letters, digits,
    /// `'()+_,-./:=?` and space, not last): it goes unquoted into `Content-Type`.
    package static func isValid(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        return (1...70).contains(bytes.count) && bytes.last != UInt8(ascii: " ")
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || allowedPunctuation.contains(byte)
            }
    }

    /// Throws ``FormDataError/invalidHeaderValue(field:value:)`` unless ``isValid(_:)``.
    package static func requireValid(_ boundary: String) throws(FormDataError) {
        if !isValid(boundary) { throw .invalidHeaderValue(field: "(multipart boundary)", value: boundary) }
    }

    private static let allowedPunctuation = Set("'()+_,-./:=? ".utf8)

    /// A random (version 4) UUID in its uppercase 8-4-4-4-12 text form, from the system's
    /// random generator: Foundation's `UUID()` opens and reads `/dev/urandom` each time on Linux.
    private static func randomUUIDString() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        // One draw of 16 bytes (one getrandom call; SystemRandomNumberGenerator makes one per 8).
        bytes.withUnsafeMutableBytes { fillRandom($0) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Fills `buffer` from the system's random source: one `getrandom` call on Linux (whole for
    /// up to 256 bytes), else the system generator, 8 bytes at a time.
    private static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        if buffer.count <= 256, cfilespace_random(buffer.baseAddress, Int64(buffer.count)) == 0 { return }
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
