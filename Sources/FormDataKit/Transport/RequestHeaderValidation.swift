import Foundation

/// Checks request headers before they reach the wire: a name must be an RFC 9110 token and a
/// value must not contain CR, LF or NUL, which would let a value start a new header or end the
/// header block (header injection). Both façades call it when a request is built and sent.
package enum RequestHeaderValidation {
    private static let tokenPunctuation = Set("!#$%&'*+-.^_`|~".utf8)

    /// Throws ``FormDataError/invalidRequestHeader(name:value:)`` for a bad name or value.
    package static func requireValid(name: String, value: String) throws(FormDataError) {
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
    package static func requireValid(_ headers: [String: String]) throws(FormDataError) {
        for name in headers.keys.sorted() { try requireValid(name: name, value: headers[name]!) }
    }

    /// Checks every header of `headers`, in order. Every transport calls it before anything goes
    /// out, whichever façade (or caller) built the request.
    package static func requireValid(_ headers: [(name: String, value: String)]) throws(FormDataError) {
        for header in headers { try requireValid(name: header.name, value: header.value) }
    }
}
