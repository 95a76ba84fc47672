/// A set of ASCII bytes as a 128-bit mask: a membership test is a shift and an AND, where a
/// `Set<UInt8>` hashes the byte (header names, tokens and boundaries are checked byte by byte on
/// every send).
package struct ASCIIByteSet: Sendable {
    private let low: UInt64
    private let high: UInt64

    /// The set of the ASCII letters and digits and `punctuation`'s bytes (ASCII only).
    package init(alphanumericsAnd punctuation: String) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for byte in ("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + punctuation).utf8 {
            precondition(byte < 0x80, "ASCIIByteSet holds ASCII bytes only")
            if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
        }
        self.low = low
        self.high = high
    }

    /// Whether `byte` is in the set (never for a byte above 0x7F).
    @inline(__always)
    package func contains(_ byte: UInt8) -> Bool {
        byte < 64 ? low & (1 << UInt64(byte)) != 0 : byte < 128 && high & (1 << UInt64(byte &- 64)) != 0
    }
}
