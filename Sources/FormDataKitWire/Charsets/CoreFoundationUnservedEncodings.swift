import Foundation

// The CoreFoundation encoding numbers FormDataKit cannot serve, and how an unknown one is named
// in its error.

extension LegacyCharsets {
    /// CoreFoundation encodings that glibc's `iconv` has no exact converter for, by the name of
    /// their CoreFoundation constant, with the IANA charset closest to them (what to pass to
    /// ``String/Encoding/iana(_:)`` instead), for ``FormDataError/unknownEncoding(rawValue:)``.
    /// (The Mac CJK encodings are their national standard plus a few Mac-only characters, and
    /// map some shared ones differently: glibc's EUC-CN reads 0xA1A4 as U+30FB where Mac
    /// Chinese Simplified reads U+00B7.)
    static let unserved: [UInt32: (constant: String, closest: String?)] = [
        0x0001: ("kCFStringEncodingMacJapanese", "shift_jis"),
        0x0002: ("kCFStringEncodingMacChineseTrad", "big5"),
        0x0003: ("kCFStringEncodingMacKorean", "euc-kr"),
        0x0004: ("kCFStringEncodingMacArabic", "windows-1256"),
        0x0005: ("kCFStringEncodingMacHebrew", "windows-1255"),
        0x0006: ("kCFStringEncodingMacGreek", "windows-1253"),
        0x0015: ("kCFStringEncodingMacThai", "windows-874"),
        0x0019: ("kCFStringEncodingMacChineseSimp", "gb2312"),
        0x001E: ("kCFStringEncodingMacVietnamese", "windows-1258"),
        0x0021: ("kCFStringEncodingMacSymbol", nil),
        0x0022: ("kCFStringEncodingMacDingbats", nil),
        0x0023: ("kCFStringEncodingMacTurkish", "windows-1254"),
        0x0024: ("kCFStringEncodingMacCroatian", "windows-1250"),
        0x0025: ("kCFStringEncodingMacIcelandic", "windows-1252"),
        0x0026: ("kCFStringEncodingMacRomanian", "windows-1250"),
        0x008C: ("kCFStringEncodingMacFarsi", "windows-1256"),
        0x0601: ("kCFStringEncodingANSEL", nil),
        0x0628: ("kCFStringEncodingShiftJIS_X0213", "shift_jis"),
        0x0630: ("kCFStringEncodingGB_2312_80", "gb2312"),
        0x0640: ("kCFStringEncodingKSC_5601_87", "euc-kr"),
        0x0802: ("kCFStringEncodingISO_2022_JP_1", nil),
        0x0A04: ("kCFStringEncodingMacRomanLatin1", "iso-8859-1"),
        0x0A05: ("kCFStringEncodingHZ_GB_2312", "gb2312"),
        0x0A09: ("kCFStringEncodingBig5_E", "big5"),
        0x0B01: ("kCFStringEncodingNextStepLatin", "windows-1252"),
        0x0B02: ("kCFStringEncodingNextStepJapanese", "euc-jp"),
        0x0C01: ("kCFStringEncodingEBCDIC_US", nil),
    ]

    /// `encoding` with a sign-extended CoreFoundation value (`0xFFFFFFFF8xxxxxxx`: what a
    /// negative literal such as `-2147483623`, kCFStringEncodingMacChineseSimp's number, becomes
    /// as a 64-bit `NSStringEncoding`) read as the 32-bit value (`0x8xxxxxxx`), as CoreFoundation
    /// reads it; any other encoding unchanged.
    static func zeroExtended(_ encoding: String.Encoding) -> String.Encoding {
        let raw = encoding.rawValue
        guard raw >> 32 == 0xFFFF_FFFF, raw & coreFoundationFlag != 0 else { return encoding }
        return String.Encoding(rawValue: raw & 0xFFFF_FFFF)
    }

    /// What ``FormDataError/unknownEncoding(rawValue:)`` says about `rawValue`: the
    /// CoreFoundation constant it is (when it is one FormDataKit knows the name of) and the IANA
    /// name to suggest.
    static func unknownEncodingHint(_ rawValue: UInt) -> (constant: String?, suggestion: String) {
        let raw = zeroExtended(String.Encoding(rawValue: rawValue)).rawValue
        guard raw & coreFoundationFlag != 0, raw >> 32 == 0, let entry = unserved[UInt32(truncatingIfNeeded: raw & ~coreFoundationFlag)]
        else { return (nil, "gbk") }
        return (entry.constant, entry.closest ?? "utf-8")
    }
}
