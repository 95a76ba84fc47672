import FormDataKitWire
import Foundation

/// Escaping for `name="…"` and `filename="…"` in `Content-Disposition`, as browsers do it
/// (WHATWG HTML, multipart/form-data encoding): `"` → `%22`, CR → `%0D`, LF → `%0A`.
/// Everything else, non-ASCII included, is kept and written in the form's encoding.
/// (ASIHTTPRequest and AFNetworking inserted these characters raw: header injection.)
package enum HeaderParameterEscaping {
    /// `value` with `"`, CR and LF percent-escaped.
    static func escape(_ value: String) -> String {
        // These are ASCII bytes, which never occur inside a multi-byte UTF-8 sequence.
        guard value.containsUTF8Byte(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return value }
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
    static func formDataDisposition(name: String, fileName: String?) -> String {
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

    /// Throws ``FormDataError/trailingBackslash(field:role:)`` when `value` (a name or filename)
    /// ends in the byte `\` once written in `encoding`. Written as browsers, ASIHTTPRequest and
    /// AFNetworking write it, `name="a\"; filename="ok.txt"`, the `\"` reads as an escaped quote
    /// to Werkzeug, PHP, Go's mime/multipart, python-multipart and Python's `email`: each saw a
    /// text field named `a"; filename=` (or none), and no file. Neither `%5C` nor `\\` is read back
    /// as `\` by all of them, so the name is refused rather than sent changed
    /// (Migration/ASIFormDataRequest.md has the measured table). The byte counts, not the
    /// character: in Shift_JIS, Big5 and GBK, characters such as `表` end in 0x5C. A backslash
    /// anywhere else is sent as it is.
    static func requireNoTrailingBackslash(
        _ value: String, encoding: String.Encoding, field: String, role: FormDataError.FieldRole
    ) throws(FormDataError) {
        // An ASCII last character is its own last byte in every encoding a form may use; only a
        // multi-byte last character in a legacy charset needs the string encoded to know.
        let lastUTF8 = value.utf8.last ?? 0
        let last = encoding == .utf8 || lastUTF8 < 0x80 ? lastUTF8 : IANACharset.encode(value, encoding)?.last
        if last == UInt8(ascii: "\\") { throw .trailingBackslash(field: field, role: role) }
    }

    /// Throws ``FormDataError/invalidHeaderValue(field:value:)`` when `value` contains CR, LF or NUL.
    package static func requireSafeHeaderValue(_ value: String, field: String) throws(FormDataError) {
        if value.containsUTF8Byte(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw .invalidHeaderValue(field: field, value: value)
        }
    }
}
