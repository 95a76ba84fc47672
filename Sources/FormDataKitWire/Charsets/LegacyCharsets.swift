#if canImport(Darwin)
import CoreFoundation
#endif
import Foundation

// MARK: - Public API

public extension String.Encoding {
    /// GB 18030, the Chinese national charset (a superset of GBK that covers all of Unicode);
    /// sent as `charset=gb18030`.
    ///
    /// The raw value (0x80000632) is what Apple's
    /// `CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingGB_18030_2000)` yields, so code
    /// ported from Objective-C that passes that number gets this encoding on every platform.
    /// Usable as `FormDataRequest.stringEncoding`; converted with `iconv` on Linux and with
    /// CoreFoundation on Apple platforms.
    static let legacyGB18030 = String.Encoding(rawValue: 0x8000_0632)

    /// GBK (Simplified Chinese, also known as CP936 / windows-936); sent as `charset=gbk`.
    ///
    /// The raw value (0x80000631) is
    /// `CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingGBK_95)`. The raw value of
    /// `kCFStringEncodingDOSChineseSimplif` (code page 936, 0x80000421) is accepted as well and
    /// also sends `charset=gbk`.
    static let legacyGBK = String.Encoding(rawValue: 0x8000_0631)

    /// Big5 (Traditional Chinese); sent as `charset=big5`.
    ///
    /// The raw value (0x80000A03) is `CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingBig5)`.
    static let legacyBig5 = String.Encoding(rawValue: 0x8000_0A03)

    /// EUC-KR (Korean, KS X 1001); sent as `charset=euc-kr`.
    ///
    /// The raw value (0x80000940) is `CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingEUC_KR)`.
    /// Hangul syllables outside KS X 1001's 2,350 (such as `똠`) are refused on Linux; Microsoft's
    /// extension, `String.Encoding.iana("cp949")` (`charset=cp949`), has all 11,172.
    static let legacyEUCKR = String.Encoding(rawValue: 0x8000_0940)

    /// KOI8-R (Russian); sent as `charset=koi8-r`.
    ///
    /// The raw value (0x80000A02) is `CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingKOI8_R)`.
    static let legacyKOI8R = String.Encoding(rawValue: 0x8000_0A02)

    /// The encoding of the IANA charset `name` (compared without case, surrounding spaces
    /// ignored), or nil when this platform's converter does not know it.
    ///
    /// - Foundation's own encodings come back as themselves: `iana("utf-8") == .utf8`,
    ///   `iana("Shift_JIS") == .shiftJIS`, `iana("EUC-JP") == .japaneseEUC`,
    ///   `iana("windows-1251") == .windowsCP1251`.
    /// - The legacy charsets CoreFoundation has a constant for come back with the raw value
    ///   `CFStringConvertEncodingToNSStringEncoding` gives on Apple platforms (the same number on
    ///   every platform): `iana("GBK") == .legacyGBK`, `iana("gb18030") == .legacyGB18030`,
    ///   `iana("big5")`, `iana("euc-kr")`, `iana("koi8-r")`, `iana("koi8-u")`, `iana("gb2312")`,
    ///   `iana("big5-hkscs")`, `iana("cp949")`, `iana("iso-8859-5")`, `iana("windows-1255")`,
    ///   `iana("cp866")`, `iana("x-mac-cyrillic")` and their common aliases.
    /// - Any other charset the platform converts: on Apple platforms what
    ///   `CFStringConvertIANACharSetNameToEncoding` knows; on Linux what glibc's `iconv` knows
    ///   (`iconv -l`). On Linux such an encoding's raw value is assigned when first asked for and
    ///   is only meaningful in this process: keep the name, not the number.
    ///
    /// An encoding found here is not necessarily usable for a form body: bodies need an
    /// ASCII-compatible, stateless charset, so `utf-16`, `iso-2022-jp`, `iso-2022-kr`, `utf-7`,
    /// EBCDIC and the like are refused when the body is built
    /// (``FormDataError/unsupportedEncoding(_:)``).
    ///
    /// ```swift
    /// let request = FormDataRequest(url: url)
    /// request.stringEncoding = .iana("GBK") ?? .utf8   // sends charset=gbk
    /// ```
    static func iana(_ name: String) -> String.Encoding? {
        LegacyCharsets.encoding(named: name)
    }
}

// MARK: - The charsets

/// A charset FormDataKit converts itself (not through `String.data(using:)` alone): its
/// encoding, the lowercase name written into `charset=`, and the name the converter knows it by.
struct LegacyCharset: Sendable, Equatable {
    let encoding: String.Encoding
    /// The lowercase IANA name, as `charset=` carries it.
    let name: String
    /// The name `iconv_open` takes (Linux) — unused on Apple platforms, where Foundation converts.
    let converterName: String
    /// Whether the converter reads bytes 0x5C and 0x7E as JIS X 0201's `¥` and `‾` (glibc's
    /// plain Shift_JIS does) while servers read them as ASCII `\` and `~`: then `\` and `~`
    /// are written as those bytes, and `¥` and `‾`, which would arrive as `\` and `~`, are refused.
    var jisRoman = false

    init(encoding: String.Encoding, name: String, converterName: String, jisRoman: Bool = false) {
        self.encoding = encoding
        self.name = name
        self.converterName = converterName
        self.jisRoman = jisRoman
    }
}

/// The legacy charsets: which names select which encoding, which raw values are which charset,
/// and (by probing the converter) which of them can carry a form body.
enum LegacyCharsets {
    /// NSStringEncoding values of CoreFoundation encodings are `0x80000000 | CFStringEncoding`.
    static let coreFoundationFlag: UInt = 0x8000_0000

    /// CoreFoundation encodings with a name of their own: CFStringEncoding → (charset name,
    /// iconv name, names that select it). Names are CoreFoundation's
    /// (`CFStringConvertEncodingToIANACharSetName`), except GBK, which CoreFoundation has no
    /// name for.
    static let named: [UInt32: (name: String, converter: String, aliases: [String])] = [
        0x0632: ("gb18030", "GB18030", ["gb18030"]),
        0x0631: ("gbk", "GBK", ["gbk", "cp936", "ms936", "windows-936", "x-gbk", "csgbk"]),
        0x0421: ("gbk", "CP936", []),  // kCFStringEncodingDOSChineseSimplif, the IANA alias CP936 of GBK
        0x0930: ("gb2312", "EUC-CN", ["gb2312", "euc-cn", "x-euc-cn", "csgb2312", "cn-gb"]),
        0x0A03: ("big5", "BIG5", ["big5", "csbig5", "cn-big5", "x-x-big5", "big-5"]),
        0x0A06: ("big5-hkscs", "BIG5-HKSCS", ["big5-hkscs", "big5hkscs"]),
        0x0423: ("cp950", "CP950", ["cp950", "ms950", "windows-950"]),
        0x0931: ("euc-tw", "EUC-TW", ["euc-tw", "x-euc-tw"]),
        0x0940: ("euc-kr", "EUC-KR", ["euc-kr", "cseuckr", "x-euc-kr"]),
        0x0422: ("cp949", "CP949", ["cp949", "uhc", "ms949", "windows-949", "ks_c_5601-1987", "ks_c_5601-1989", "csksc56011987"]),
        0x0510: ("windows-1361", "JOHAB", ["johab", "windows-1361", "cp1361"]),
        0x0840: ("iso-2022-kr", "ISO-2022-KR", ["iso-2022-kr", "csiso2022kr"]),
        0x0830: ("iso-2022-cn", "ISO-2022-CN", ["iso-2022-cn"]),
        // Plain Shift_JIS (JIS X 0208 only), what CoreFoundation gives for the name "Shift_JIS";
        // the name itself selects Foundation's `.shiftJIS`.
        0x0A01: ("shift_jis", "SHIFT_JIS", []),
        0x0920: ("euc-jp", "EUC-JP", []),
        0x0A02: ("koi8-r", "KOI8-R", ["koi8-r", "cskoi8r", "koi8"]),
        0x0A08: ("koi8-u", "KOI8-U", ["koi8-u", "cskoi8u"]),
        0x0A07: ("viscii", "VISCII", ["viscii", "csviscii"]),
        0x0007: ("x-mac-cyrillic", "MAC-CYRILLIC", ["x-mac-cyrillic", "maccyrillic"]),
        0x001D: ("x-mac-centraleurroman", "MAC-CENTRALEUROPE", ["x-mac-centraleurroman", "x-mac-ce"]),
        0x0098: ("x-mac-ukrainian", "MACUKRAINIAN", ["x-mac-ukrainian"]),
        // The raw CoreFoundation values of encodings Foundation has a constant for (Mac OS Roman,
        // ASCII, ISO-2022-JP): ported code passes `0x80000000 | CFStringEncoding` as often as
        // the constant.
        0x0000: ("macintosh", "MACINTOSH", []),
        0x0600: ("us-ascii", "ASCII", []),
        0x0820: ("iso-2022-jp", "ISO-2022-JP", []),
        // Known so that they are refused by name (stateful, or not ASCII-compatible).
        0x0801: ("iso-2022-jp-2", "ISO-2022-JP-2", ["iso-2022-jp-2", "csiso2022jp2"]),
        0x0803: ("iso-2022-jp-3", "ISO-2022-JP-3", ["iso-2022-jp-3"]),
        0x0831: ("iso-2022-cn-ext", "ISO-2022-CN-EXT", ["iso-2022-cn-ext"]),
        0x0A10: ("utf7-imap", "UTF-7-IMAP", ["utf7-imap", "utf-7-imap"]),
        0x0C02: ("ibm037", "IBM037", ["ibm037", "cp037", "ebcdic-cp-us", "csibm037"]),
        // CoreFoundation's Unicode encodings that Foundation gives other raw values for
        // (kCFStringEncodingUnicode, kCFStringEncodingUTF7, kCFStringEncodingUTF8).
        0x0100: ("utf-16", "UTF-16", []),
        0x0400_0100: ("utf-7", "UTF-7", ["utf-7", "csunicode11utf7"]),
        0x0800_0100: ("utf-8", "UTF-8", []),
    ]

    /// Code pages CoreFoundation has a DOS or Windows encoding for: code page → CFStringEncoding.
    /// DOS ones are named `cpNNN`, Windows ones `windows-NNNN` (as CoreFoundation names them).
    static let codePages: [Int: UInt32] = [
        437: 0x0400, 737: 0x0405, 775: 0x0406, 850: 0x0410, 851: 0x0411, 852: 0x0412, 855: 0x0413,
        857: 0x0414, 860: 0x0415, 861: 0x0416, 862: 0x0417, 863: 0x0418, 864: 0x0419, 865: 0x041A,
        866: 0x041B, 869: 0x041C, 874: 0x041D, 932: 0x0420, 936: 0x0421, 949: 0x0422, 950: 0x0423,
        1252: 0x0500, 1250: 0x0501, 1251: 0x0502, 1253: 0x0503, 1254: 0x0504, 1255: 0x0505,
        1256: 0x0506, 1257: 0x0507, 1258: 0x0508, 1361: 0x0510,
    ]

    /// CFStringEncoding → code page, the inverse of ``codePages``.
    static let codePageOf: [UInt32: Int] = Dictionary(uniqueKeysWithValues: codePages.map { ($1, $0) })

    /// Names of Foundation's own encodings (and their common aliases).
    static let builtInNames: [String: String.Encoding] = [
        "utf-8": .utf8, "utf8": .utf8,
        "us-ascii": .ascii, "ascii": .ascii, "ansi_x3.4-1968": .ascii, "iso646-us": .ascii, "csascii": .ascii,
        "iso-8859-1": .isoLatin1, "iso8859-1": .isoLatin1, "iso_8859-1": .isoLatin1, "latin1": .isoLatin1,
        "l1": .isoLatin1, "csisolatin1": .isoLatin1,
        "iso-8859-2": .isoLatin2, "iso8859-2": .isoLatin2, "iso_8859-2": .isoLatin2, "latin2": .isoLatin2,
        "l2": .isoLatin2, "csisolatin2": .isoLatin2,
        "windows-1250": .windowsCP1250, "cp1250": .windowsCP1250,
        "windows-1251": .windowsCP1251, "cp1251": .windowsCP1251,
        "windows-1252": .windowsCP1252, "cp1252": .windowsCP1252,
        "windows-1253": .windowsCP1253, "cp1253": .windowsCP1253,
        "windows-1254": .windowsCP1254, "cp1254": .windowsCP1254,
        "macintosh": .macOSRoman, "mac": .macOSRoman, "x-mac-roman": .macOSRoman, "csmacintosh": .macOSRoman,
        "shift_jis": .shiftJIS, "shift-jis": .shiftJIS, "sjis": .shiftJIS, "ms_kanji": .shiftJIS,
        "csshiftjis": .shiftJIS, "x-sjis": .shiftJIS, "windows-31j": .shiftJIS, "cp932": .shiftJIS,
        "euc-jp": .japaneseEUC, "eucjp": .japaneseEUC, "x-euc-jp": .japaneseEUC,
        "cseucpkdfmtjapanese": .japaneseEUC,
        "iso-2022-jp": .iso2022JP, "csiso2022jp": .iso2022JP,
        "utf-16": .utf16, "utf-16be": .utf16BigEndian, "utf-16le": .utf16LittleEndian,
        "utf-32": .utf32, "utf-32be": .utf32BigEndian, "utf-32le": .utf32LittleEndian,
    ]

    /// Every alias of ``named`` → its encoding.
    static let aliases: [String: String.Encoding] = {
        var result: [String: String.Encoding] = [:]
        for (cf, entry) in named {
            for alias in entry.aliases { result[alias] = encoding(coreFoundation: cf) }
        }
        return result
    }()

    /// What `CFStringConvertEncodingToNSStringEncoding` gives for `cf`: Foundation's own
    /// constant for the encodings it has one for, `0x80000000 | cf` otherwise.
    static func encoding(coreFoundation cf: UInt32) -> String.Encoding {
        switch cf {
        case 0x0201: return .isoLatin1
        case 0x0202: return .isoLatin2
        case 0x0500: return .windowsCP1252
        case 0x0501: return .windowsCP1250
        case 0x0502: return .windowsCP1251
        case 0x0503: return .windowsCP1253
        case 0x0504: return .windowsCP1254
        case 0x0420: return .shiftJIS
        case 0x0920: return .japaneseEUC
        case 0x0820: return .iso2022JP
        case 0x0000: return .macOSRoman
        case 0x0600: return .ascii
        default: return String.Encoding(rawValue: coreFoundationFlag | UInt(cf))
        }
    }

    // MARK: Names → encodings

    /// ``String/Encoding/iana(_:)``.
    static func encoding(named rawName: String) -> String.Encoding? {
        let name = String(rawName.trimmingCharacters(in: .whitespaces).lowercased())
        guard isPlausibleName(name) else { return nil }
        if let builtIn = builtInNames[name] { return builtIn }
        if let legacy = aliases[name] { return legacy }
        if let cf = coreFoundationEncoding(pattern: name) { return encoding(coreFoundation: cf) }
        #if canImport(Darwin)
        let cf = CFStringConvertIANACharSetNameToEncoding(name as CFString)
        guard cf != kCFStringEncodingInvalidId else { return nil }
        return String.Encoding(rawValue: CFStringConvertEncodingToNSStringEncoding(cf))
        #elseif canImport(Glibc) || canImport(Musl)
        return Dynamic.encoding(named: name)
        #else
        return nil
        #endif
    }

    /// Whether `name` can be a charset name: 1–64 ASCII letters, digits and `-_.:()+`. Anything
    /// else (notably `/` and `,`, which would pass `//TRANSLIT` or `//IGNORE` to `iconv_open`)
    /// is refused.
    static func isPlausibleName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count) else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte == 0x3A || byte == 0x28 || byte == 0x29 || byte == 0x2B
        }
    }

    /// `iso-8859-N`, `windows-NNNN`, `cpNNN` and `ibmNNN` names of CoreFoundation's ISO, DOS and
    /// Windows encodings.
    static func coreFoundationEncoding(pattern name: String) -> UInt32? {
        for prefix in ["iso-8859-", "iso8859-", "iso_8859-"] where name.hasPrefix(prefix) {
            guard let number = Int(name.dropFirst(prefix.count)), (1...16).contains(number), number != 12 else { return nil }
            return 0x0200 + UInt32(number)
        }
        for prefix in ["windows-", "cp", "ibm", "ms-", "x-cp"] where name.hasPrefix(prefix) {
            guard let number = Int(name.dropFirst(prefix.count)) else { return nil }
            return codePages[number]
        }
        return nil
    }

    // MARK: Encodings → charsets

    /// The legacy charset `encoding` is, or nil for Foundation's own encodings and unknown values.
    static func charset(for encoding: String.Encoding) -> LegacyCharset? {
        let raw = zeroExtended(encoding).rawValue
        if raw & coreFoundationFlag != 0, raw & ~coreFoundationFlag <= UInt(UInt32.max) {
            let cf = UInt32(raw & ~coreFoundationFlag)
            if let entry = named[cf] {
                return LegacyCharset(encoding: encoding, name: entry.name, converterName: entry.converter, jisRoman: cf == 0x0A01)
            }
            if cf >= 0x0201, cf <= 0x0210, cf != 0x020C {
                let number = cf - 0x0200
                return LegacyCharset(encoding: encoding, name: "iso-8859-\(number)", converterName: "ISO-8859-\(number)")
            }
            if let page = codePageOf[cf] {
                let name = cf & 0x0F00 == 0x0400 ? "cp\(page)" : "windows-\(page)"
                return LegacyCharset(encoding: encoding, name: name, converterName: "CP\(page)")
            }
        }
        #if canImport(Darwin)
        let cf = CFStringConvertNSStringEncodingToEncoding(raw)
        guard cf != kCFStringEncodingInvalidId, let name = CFStringConvertEncodingToIANACharSetName(cf) else { return nil }
        let text = name as String
        return LegacyCharset(encoding: encoding, name: text.lowercased(), converterName: text)
        #elseif canImport(Glibc) || canImport(Musl)
        return Dynamic.charset(for: encoding)
        #else
        return nil
        #endif
    }

    /// Foundation's own encodings that Foundation on Linux does not convert correctly, converted
    /// with `iconv` instead: `.japaneseEUC` (Foundation refuses every non-ASCII character) and
    /// `.macOSRoman` (Foundation writes wrong bytes, e.g. `é` as 0xBC instead of 0x8E).
    static func linuxReplacement(for encoding: String.Encoding) -> LegacyCharset? {
        #if canImport(Glibc) || canImport(Musl)
        switch encoding {
        case .japaneseEUC: return LegacyCharset(encoding: encoding, name: "euc-jp", converterName: "EUC-JP")
        case .macOSRoman: return LegacyCharset(encoding: encoding, name: "macintosh", converterName: "MACINTOSH")
        default: return nil
        }
        #else
        return nil
        #endif
    }

    // MARK: ASCII compatibility

    /// Non-ASCII characters from many scripts: in an ASCII-compatible, stateless charset each of
    /// them encodes (when it can) to bytes that include a non-ASCII byte and do not start with a
    /// control code — unlike ISO-2022's escape sequences (all ASCII bytes, starting with ESC) or
    /// VISCII's letters on control codes. (Windows-1258 writes `Ỵ` as `Y` plus a combining mark:
    /// that is fine.)
    static let probeCharacters = [
        "é", "ß", "£", "ő", "ж", "Ж", "α", "ש", "ع", "ก", "中", "文", "表", "あ", "ア", "ｱ", "한", "€", "Ẳ", "Ỵ",
    ]

    private static let compatibility = Locked<[UInt: Bool]>([:])

    /// Whether `charset` can carry a form body: all of ASCII encodes to itself (and reads back as
    /// itself), and the probed non-ASCII characters encode as ``probeCharacters`` describes.
    /// Probed once per encoding, with the converter the body is encoded with.
    static func isASCIICompatible(_ charset: LegacyCharset) -> Bool {
        if let known = compatibility.withLock({ $0[charset.encoding.rawValue] }) { return known }
        let result = probe(charset)
        compatibility.withLock { $0[charset.encoding.rawValue] = result }
        return result
    }

    private static func probe(_ charset: LegacyCharset) -> Bool {
        let ascii = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        guard let bytes = CharsetConverter.encode(ascii, charset), bytes.elementsEqual(ascii.utf8) else { return false }
        for character in probeCharacters {
            guard let encoded = CharsetConverter.encode(character, charset), let first = encoded.first else { continue }
            if first < 0x20 || first == 0x7F || !encoded.contains(where: { $0 >= 0x80 }) { return false }
        }
        return true
    }

    // MARK: Other iconv charsets (Linux)

    #if canImport(Glibc) || canImport(Musl)
    /// Charsets iconv knows that none of the tables name, registered when first asked for with a
    /// raw value from a private range (0x7E000000 + n: Foundation's values are below 0x100 or
    /// have the high bit set).
    enum Dynamic {
        static let base: UInt = 0x7E00_0000
        static let limit = 4096
        private static let registry = Locked<(byName: [String: UInt], charsets: [LegacyCharset])>(([:], []))

        static func encoding(named name: String) -> String.Encoding? {
            if let raw = registry.withLock({ $0.byName[name] }) { return String.Encoding(rawValue: raw) }
            guard Iconv.knows(name) else { return nil }
            return registry.withLock { registry -> String.Encoding? in
                if let raw = registry.byName[name] { return String.Encoding(rawValue: raw) }
                guard registry.charsets.count < limit else { return nil }
                let encoding = String.Encoding(rawValue: base + UInt(registry.charsets.count))
                registry.charsets.append(LegacyCharset(encoding: encoding, name: name, converterName: name))
                registry.byName[name] = encoding.rawValue
                return encoding
            }
        }

        static func charset(for encoding: String.Encoding) -> LegacyCharset? {
            guard encoding.rawValue >= base, encoding.rawValue < base + UInt(limit) else { return nil }
            let index = Int(encoding.rawValue - base)
            return registry.withLock { index < $0.charsets.count ? $0.charsets[index] : nil }
        }
    }
    #endif
}
