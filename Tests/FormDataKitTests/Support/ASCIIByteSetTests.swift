@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Testing
@testable import FormDataKit

/// The 128-bit mask set against a plain `Set<UInt8>` of the same bytes, for every byte value.
@Suite("ASCII byte sets")
struct ASCIIByteSetTests {
    @Test(
        "membership matches a Set<UInt8> for all 256 bytes, at both halves' edges too",
        arguments: ["!#$%&'*+-.^_`|~", "'()+_,-./:=? ", "?@\u{7F}", ""])
    func matchesASet(punctuation: String) {
        let mask = ASCIIByteSet(alphanumericsAnd: punctuation)
        let reference = Set(("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + punctuation).utf8)
        for byte in UInt8.min...UInt8.max { #expect(mask.contains(byte) == reference.contains(byte), "byte \(byte)") }
    }

    @Test("containsUTF8Byte sees every byte of native, bridged-looking and substring text")
    func scansEveryByte() {
        #expect("abc\u{0}".containsUTF8Byte { $0 == 0 })
        #expect(!"abc".containsUTF8Byte { $0 == 0 })
        #expect("x é".containsUTF8Byte { $0 == 0xA9 })
        #expect("ab\ncd".dropFirst(2).containsUTF8Byte { $0 == 0x0A })
        #expect(!"ab\ncd".dropFirst(3).containsUTF8Byte { $0 == 0x0A })
    }
}
