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
            return asiPrefix + UUID().uuidString.uppercased()
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

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
