import Foundation

/// Multipart boundaries: ASIHTTPRequest's shape, and the check against content.
package enum MultipartBoundary {
    /// The prefix ASIHTTPRequest put before the UUID.
    package static let asiPrefix = "0xKhTmLbOuNdArY-"

    /// A new random boundary in ASIHTTPRequest's shape: `0xKhTmLbOuNdArY-` + an uppercase UUID (52 characters).
    ///
    /// Such a boundary is checked against in-memory content only (and replaced on a hit); file
    /// contents are not scanned for it: with 122 random bits the chance that a file contains it
    /// is negligible. A boundary the caller fixes is checked against files too.
    package static func makeASIBoundary() -> String {
        asiPrefix + UUID().uuidString.uppercased()
    }

    /// The bytes that must not occur in content: `--` + boundary.
    package static func delimiter(_ boundary: String) -> [UInt8] {
        Array("--\(boundary)".utf8)
    }

    /// Throws ``FormDataError/invalidHeaderValue(field:value:)`` unless `boundary` is 1–70 of
    /// RFC 2046's boundary characters (letters, digits, `'()+_,-./:=?` and space, not last).
    package static func requireValid(_ boundary: String) throws(FormDataError) {
        let allowed = Set("'()+_,-./:=? ".utf8)
        let bytes = Array(boundary.utf8)
        let valid = (1...70).contains(bytes.count) && bytes.last != UInt8(ascii: " ")
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || allowed.contains(byte)
            }
        if !valid { throw .invalidHeaderValue(field: "(multipart boundary)", value: boundary) }
    }
}
