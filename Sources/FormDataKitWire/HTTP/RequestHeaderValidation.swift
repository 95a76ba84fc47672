import Foundation

/// Checks request headers before they reach the wire: a name must be an RFC 9110 token and a
/// value must not contain CR, LF or NUL, which would let a value start a new header or end the
/// header block (header injection). The send driver applies it to every request, whichever
/// façade built it; a transport of your own can apply the same rules.
public enum RequestHeaderValidation {
    /// RFC 9110's `tchar`: letters, digits and ``!#$%&'*+-.^_`|~``.
    private static let tokenBytes = ASCIIByteSet(alphanumericsAnd: "!#$%&'*+-.^_`|~")

    /// Throws ``FormDataError/invalidRequestHeader(name:value:)`` for a bad name or value.
    /// - Parameters:
    ///   - name: the header's name.
    ///   - value: its value.
    /// - Throws: ``FormDataError/invalidRequestHeader(name:value:)`` naming both.
    public static func requireValid(name: String, value: String) throws(FormDataError) {
        let nameIsToken = isToken(name)
        let valueIsSafe = !value.containsUTF8Byte { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
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

    /// Whether `text` is an RFC 9110 token (a header name, a method, a cookie name).
    /// - Parameter text: the text.
    /// - Returns: true when it is non-empty and every byte is a `tchar`.
    public static func isToken(_ text: String) -> Bool {
        !text.isEmpty && !text.containsUTF8Byte { !tokenBytes.contains($0) }
    }

    /// Checks a request method.
    /// - Parameter method: the method as it goes out.
    /// - Throws: ``FormDataError/invalidRequestMethod(method:)`` unless it is a token.
    public static func requireValidMethod(_ method: String) throws(FormDataError) {
        if !isToken(method) { throw .invalidRequestMethod(method: method) }
    }

    /// Checks a request cookie: a token name, and a value of RFC 6265 cookie-octets (optionally
    /// in double quotes).
    /// - Parameters:
    ///   - name: the cookie's name.
    ///   - value: its value.
    /// - Throws: ``FormDataError/invalidRequestCookie(name:value:)`` naming both.
    public static func requireValidCookie(name: String, value: String) throws(FormDataError) {
        var octets = Substring(value).utf8
        if octets.count >= 2, octets.first == 0x22, octets.last == 0x22 { octets = octets.dropFirst().dropLast() }
        let valid = octets.allSatisfy { byte in
            byte == 0x21 || (byte >= 0x23 && byte <= 0x2B) || (byte >= 0x2D && byte <= 0x3A) || (byte >= 0x3C && byte <= 0x5B)
                || (byte >= 0x5D && byte <= 0x7E)
        }
        if !isToken(name) || !valid { throw .invalidRequestCookie(name: name, value: value) }
    }

    /// Checks a credential that may be put into a header (Digest's `username="…"`, NTLM's domain).
    /// - Parameters:
    ///   - value: the credential.
    ///   - field: its property's name, for the error.
    /// - Throws: ``FormDataError/invalidCredential(field:)`` for CR, LF or NUL.
    public static func requireValidCredential(_ value: String?, field: String) throws(FormDataError) {
        if let value, value.containsUTF8Byte(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) { throw .invalidCredential(field: field) }
    }
}
