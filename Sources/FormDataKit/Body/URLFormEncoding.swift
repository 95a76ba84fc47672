import Foundation

/// The `application/x-www-form-urlencoded` escaping ASIHTTPRequest used: only `A–Z a–z 0–9 - . _`
/// stay as they are; every other byte of the string (in the chosen encoding) becomes `%XX` with
/// uppercase hex. Space is `%20`, never `+`. The set of bytes kept is a parameter
/// (``UnescapedBytes``), so the AFNetworking adapter uses the same escaper with its own set.
package enum URLFormEncoding {
    /// The set of bytes written unescaped; every other byte becomes `%XX` (uppercase hex).
    package struct UnescapedBytes: Sendable {
        /// For each byte value, whether it is written unescaped.
        fileprivate let table: [Bool]

        /// The bytes of `ascii` (ASCII characters only) stay unescaped.
        package init(_ ascii: String) {
            var table = [Bool](repeating: false, count: 256)
            for byte in ascii.utf8 where byte < 0x80 { table[Int(byte)] = true }
            self.table = table
        }

        /// ASIHTTPRequest's set: `A–Z a–z 0–9 - . _`.
        package static let asi = UnescapedBytes(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._")
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends the escaped form of `bytes` to `output`, keeping the bytes in `unescaped`
    /// (ASIHTTPRequest's set unless told otherwise).
    package static func appendEscaped<Bytes: Sequence>(
        _ bytes: Bytes, keeping unescaped: UnescapedBytes = .asi, to output: inout [UInt8]
    ) where Bytes.Element == UInt8 {
        let table = unescaped.table
        for byte in bytes {
            if table[Int(byte)] {
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
