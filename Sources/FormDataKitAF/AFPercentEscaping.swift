import FormDataKit
import Foundation

/// AFNetworking's query escaping: every byte of the string's UTF-8 form becomes `%XX`
/// (uppercase hex) except `A–Z a–z 0–9 - . _ ~ / ?`. Space is `%20`, `%` is `%25` (so
/// already-escaped input is escaped again), and the serializer's `stringEncoding` is not used.
///
/// ```swift
/// AFPercentEscapedStringFromString(":#[]@!$&'()*+,;=?/")  // "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/"
/// ```
/// - Parameter string: the text to escape.
/// - Returns: the escaped text.
public func AFPercentEscapedStringFromString(_ string: String) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(string.utf8.count)
    URLFormEncoding.appendEscaped(string.utf8, keeping: AFQueryEscaping.unescaped, to: &out)
    return String(decoding: out, as: UTF8.self)
}

/// The set of bytes AFNetworking leaves unescaped in query strings.
enum AFQueryEscaping {
    /// RFC 3986 unreserved characters plus `/` and `?` (URLQueryAllowed minus `:#[]@!$&'()*+,;=`).
    static let unescaped = URLFormEncoding.UnescapedBytes(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?")
}
