import Foundation

/// Multipart boundaries: ASIHTTPRequest's shape, and the check against content.
package enum MultipartBoundary {
    /// The prefix ASIHTTPRequest put before the UUID.
    package static let asiPrefix = "0xKhTmLbOuNdArY-"

    /// A new random boundary in ASIHTTPRequest's shape: `0xKhTmLbOuNdArY-` + an uppercase UUID (52 characters).
    package static func makeASIBoundary() -> String {
        asiPrefix + UUID().uuidString.uppercased()
    }

    /// The bytes that must not occur in content: `--` + boundary.
    package static func delimiter(_ boundary: String) -> [UInt8] {
        Array("--\(boundary)".utf8)
    }
}
