import FormDataKitWire
import Foundation

/// The `application/x-www-form-urlencoded` escaping ASIHTTPRequest used: only `A–Z a–z 0–9 - . _`
/// stay as they are; every other byte of the string (in the chosen encoding) becomes `%XX` with
/// uppercase hex. Space is `%20`, never `+`. The set of bytes kept is a parameter
/// (``UnescapedBytes``), so the AFNetworking adapter uses the same escaper with its own set.
package enum URLFormEncoding {
    /// A set of bytes written unescaped, for escaping rules other than ASIHTTPRequest's.
    package struct UnescapedBytes: Sendable {
        /// For each byte value, whether it is written unescaped.
        fileprivate let table: [Bool]

        /// The bytes of `ascii` (ASCII characters only) stay unescaped.
        package init(_ ascii: String) {
            var table = [Bool](repeating: false, count: 256)
            for byte in ascii.utf8 where byte < 0x80 { table[Int(byte)] = true }
            self.table = table
        }
    }

    /// Whether `byte` is written unescaped: `A–Z a–z 0–9 - . _`.
    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte &- 0x61) < 26 || (byte &- 0x41) < 26 || (byte &- 0x30) < 10 || byte == 0x2D || byte == 0x2E || byte == 0x5F
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x37 + nibble
    }

    /// Appends the escaped form of `bytes` to `output`.
    static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        appendEscaped(bytes, to: &output, where: isUnreserved)
    }

    /// Appends the escaped form of `bytes` to `output`, keeping the bytes in `unescaped`.
    package static func appendEscaped<Bytes: Sequence>(
        _ bytes: Bytes, keeping unescaped: UnescapedBytes, to output: inout [UInt8]
    ) where Bytes.Element == UInt8 {
        let table = unescaped.table
        let done: Void? = bytes.withContiguousStorageIfAvailable { appendEscaped($0, to: &output, where: { table[Int($0)] }) }
        if done == nil {
            Array(bytes).withUnsafeBufferPointer { appendEscaped($0, to: &output, where: { table[Int($0)] }) }
        }
    }

    /// The escaping loop: bytes for which `kept` is true are copied, others become `%XX`.
    @inline(__always)
    private static func appendEscaped(
        _ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8], where kept: (UInt8) -> Bool
    ) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: bytes.count * 3))
        let end = output.withUnsafeMutableBufferPointer { out -> Int in
            var index = start
            for byte in bytes {
                if kept(byte) {
                    out[index] = byte
                    index += 1
                } else {
                    out[index] = 0x25  // %
                    out[index + 1] = hexDigit(byte >> 4)
                    out[index + 2] = hexDigit(byte & 0x0F)
                    index += 3
                }
            }
            return index
        }
        output.removeLast(output.count - end)
    }

    /// Appends the escaped form of `bytes` to `output`.
    static func appendEscaped<Bytes: Sequence>(_ bytes: Bytes, to output: inout [UInt8])
    where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { appendEscaped($0, to: &output) }
        if done == nil { appendEscaped(Array(bytes), to: &output) }
    }

    /// Appends the escaped form of `string` in `encoding` to `output`; throws naming the field
    /// when a character cannot be represented.
    static func appendEscaped(
        _ string: String, encoding: String.Encoding, field: String, role: FormDataError.FieldRole,
        to output: inout [UInt8]
    ) throws(FormDataError) {
        if encoding == .utf8 {
            var string = string
            string.withUTF8 { appendEscaped($0, to: &output) }
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
