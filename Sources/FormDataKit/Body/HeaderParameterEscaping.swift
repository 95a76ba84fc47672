import Foundation

/// Escaping for `name="…"` and `filename="…"` in `Content-Disposition`, as browsers do it
/// (WHATWG HTML, multipart/form-data encoding): `"` → `%22`, CR → `%0D`, LF → `%0A`.
/// Everything else, non-ASCII included, is kept and written in the form's encoding.
/// (ASIHTTPRequest and AFNetworking inserted these characters raw: header injection.)
package enum HeaderParameterEscaping {
    /// `value` with `"`, CR and LF percent-escaped.
    package static func escape(_ value: String) -> String {
        // These are ASCII bytes, which never occur inside a multi-byte UTF-8 sequence.
        guard value.utf8.contains(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return value }
        var out = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out.append(contentsOf: "%22".unicodeScalars)
            case "\r": out.append(contentsOf: "%0D".unicodeScalars)
            case "\n": out.append(contentsOf: "%0A".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// `form-data; name="<name>"` plus `; filename="<fileName>"` when given, both escaped.
    package static func formDataDisposition(name: String, fileName: String?) -> String {
        let escapedName = escape(name)
        let escapedFileName = fileName.map(escape)
        var value = "form-data; name=\""
        value.reserveCapacity(value.utf8.count + escapedName.utf8.count + (escapedFileName?.utf8.count ?? 0) + 14)
        value += escapedName
        value += "\""
        if let escapedFileName {
            value += "; filename=\""
            value += escapedFileName
            value += "\""
        }
        return value
    }

    /// Throws ``FormDataError/invalidHeaderValue(field:value:)`` when `value` contains CR, LF or NUL.
    package static func requireSafeHeaderValue(_ value: String, field: String) throws(FormDataError) {
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw .invalidHeaderValue(field: field, value: value)
        }
    }
}
