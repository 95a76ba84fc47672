import FormDataKitBody
import FormDataKitWire
import Foundation

/// The `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header): one key
/// per logical request, the same on every copy of it — a retry after a timeout or a dropped
/// connection, a redirect or authentication challenge answered by sending again, a resumed
/// upload — so a server that supports the header processes the request once.
///
/// The value is a Structured Field string, as in the draft's examples: a key made here is a
/// random (version 4) UUID in lower case between double quotes,
/// `"8e03978e-40d5-43e8-bc93-6894a57f9324"`.
public enum IdempotencyKey {
    /// The header's name.
    public static let headerName = "Idempotency-Key"

    /// A new key: a random UUID, lower case, quoted — `"xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx"`.
    /// - Returns: the header value, 38 characters.
    public static func make() -> String {
        "\"" + UUID().uuidString.lowercased() + "\""
    }

    /// The header value for a caller's `key`: the key as a Structured Field string (quoted, with
    /// `\` and `"` escaped); a key already written as one (between double quotes) is kept as it is.
    /// - Parameter key: the key's text: printable ASCII, at least one character.
    /// - Returns: the header value.
    /// - Throws: `FormDataError.invalidRequestHeader(name:value:)` naming the header and the key
    ///   when it is empty or has a character outside printable ASCII.
    public static func headerValue(for key: String) throws(FormDataError) -> String {
        guard !key.isEmpty, key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .invalidRequestHeader(name: headerName, value: key)
        }
        if key.count >= 2, key.hasPrefix("\""), key.hasSuffix("\"") {
            guard isStructuredString(key.utf8.dropFirst().dropLast()) else { throw .invalidRequestHeader(name: headerName, value: key) }
            return key
        }
        var escaped = ""
        for character in key {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return "\"" + escaped + "\""
    }

    /// Whether `inner` is the inside of a Structured Field string: `"` and `\` only escaped.
    private static func isStructuredString(_ inner: Substring.UTF8View) -> Bool {
        var escaping = false
        for byte in inner {
            if escaping {
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { return false }
                escaping = false
            } else if byte == UInt8(ascii: "\\") {
                escaping = true
            } else if byte == UInt8(ascii: "\"") {
                return false
            }
        }
        return !escaping
    }
}
