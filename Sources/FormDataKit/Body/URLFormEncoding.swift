import Foundation

/// The `application/x-www-form-urlencoded` escaping ASIHTTPRequest used: only `A–Z a–z 0–9 - . _`
/// stay as they are; every other byte of the string (in the chosen encoding) becomes `%XX` with
/// uppercase hex. Space is `%20`, never `+`.
package enum URLFormEncoding {
    /// For each byte value, whether it is written unescaped.
    private static let unreserved: [Bool] = (0..<256).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends the escaped form of `bytes` to `output`.
    package static func appendEscaped<Bytes: Sequence>(_ bytes: Bytes, to output: inout [UInt8])
    where Bytes.Element == UInt8 {
        for byte in bytes {
            if unreserved[Int(byte)] {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    /// Appends the escaped form of `string` in `encoding` to `output`; throws naming the field
    /// when a character cannot be represented.
    package static func appendEscaped(
        _ string: String, encoding: String.Encoding, field: String, role: FormDataError.FieldRole,
        to output: inout [UInt8]
    ) throws(FormDataError) {
        if encoding == .utf8 {
            appendEscaped(string.utf8, to: &output)
        } else {
            appendEscaped(try IANACharset.encode(string, encoding, field: field, role: role), to: &output)
        }
    }

    /// `string` escaped in `encoding` (the same rule as the body), for code that called
    /// ASIFormDataRequest's `encodeURL:`.
    package static func escape(_ string: String, encoding: String.Encoding) throws(FormDataError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count * 3)
        try appendEscaped(string, encoding: encoding, field: string, role: .value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
