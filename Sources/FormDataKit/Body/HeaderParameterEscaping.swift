import Foundation

/// Escaping for `name="…"` and `filename="…"` in `Content-Disposition`, as browsers do it
/// (WHATWG HTML, multipart/form-data encoding): `"` → `%22`, CR → `%0D`, LF → `%0A`.
/// Everything else, non-ASCII included, is kept and written in the form's encoding.
/// (ASIHTTPRequest and AFNetworking inserted these characters raw: header injection.)
package enum HeaderParameterEscaping {
    /// `value` with `"`, CR and LF percent-escaped.
    package static func escape(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\r" || $0 == "\n" }) else { return value }
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
        var value = "form-data; name=\"\(escape(name))\""
        if let fileName { value += "; filename=\"\(escape(fileName))\"" }
        return value
    }

    /// Throws ``FormDataError/invalidHeaderValue(field:value:)`` when `value` contains CR, LF or NUL.
    package static func requireSafeHeaderValue(_ value: String, field: String) throws(FormDataError) {
        if value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            throw .invalidHeaderValue(field: field, value: value)
        }
    }
}
