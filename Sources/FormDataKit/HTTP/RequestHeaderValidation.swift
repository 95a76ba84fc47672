import Foundation

/// Checks request headers before they reach the wire: a name must be an RFC 9110 token and a
/// value must not contain CR, LF or NUL, which would let a value start a new header or end the
/// header block (header injection). The send driver applies it to every request, whichever
/// façade built it; a transport of your own can apply the same rules.
public enum RequestHeaderValidation {
    private static let tokenPunctuation = Set("!#$%&'*+-.^_`|~".utf8)

    /// Throws ``FormDataError/invalidRequestHeader(name:value:)`` for a bad name or value.
    /// - Parameters:
    ///   - name: the header's name.
    ///   - value: its value.
    /// - Throws: ``FormDataError/invalidRequestHeader(name:value:)`` naming both.
    public static func requireValid(name: String, value: String) throws(FormDataError) {
        let nameBytes = Array(name.utf8)
        let nameIsToken =
            !nameBytes.isEmpty
            && nameBytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || tokenPunctuation.contains(byte)
            }
        let valueIsSafe = !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
        if !nameIsToken || !valueIsSafe { throw .invalidRequestHeader(name: name, value: value) }
    }

    /// Checks every header in `headers` (in a stable order, so the first bad one is reported).
    /// - Parameter headers: the headers by name.
    /// - Throws: ``FormDataError/invalidRequestHeader(name:value:)`` for the first bad one.
    public static func requireValid(_ headers: [String: String]) throws(FormDataError) {
        for name in headers.keys.sorted() { try requireValid(name: name, value: headers[name]!) }
    }

    /// Checks every header of `headers`, in order (the send driver calls it before anything goes
    /// out, whichever façade built the request).
    /// - Parameter headers: the headers in order.
    /// - Throws: ``FormDataError/invalidRequestHeader(name:value:)`` for the first bad one.
    public static func requireValid(_ headers: [(name: String, value: String)]) throws(FormDataError) {
        for header in headers { try requireValid(name: header.name, value: header.value) }
    }
}
