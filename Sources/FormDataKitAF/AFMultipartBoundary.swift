import Foundation

/// AFNetworking's multipart boundary shape, and the check for boundaries set by hand.
enum AFMultipartBoundary {
    /// A new random boundary: `Boundary+` and two 32-bit random values as 8 uppercase hex digits
    /// each (25 characters, so the body length does not depend on the random part).
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return "Boundary+" + hex8(generator.next()) + hex8(generator.next())
    }

    /// Whether `boundary` is a valid RFC 2046 boundary: 1–70 characters from the `bchars` set,
    /// not ending in a space.
    static func isValid(_ boundary: String) -> Bool {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'()+_,-./:=? ".utf8)
        let bytes = Array(boundary.utf8)
        return (1...70).contains(bytes.count) && bytes.allSatisfy(allowed.contains) && bytes.last != UInt8(ascii: " ")
    }

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
