import Foundation

/// The IANA charset names FormDataKit writes into `charset=` parameters, and the check that an
/// encoding can carry a form body at all.
package enum IANACharset {
    /// The lowercase IANA name for `encoding` (as CoreFoundation's
    /// `CFStringConvertEncodingToIANACharSetName` gives it; `gbk` for GBK, which it has no name
    /// for), or nil when FormDataKit has none.
    package static func name(for encoding: String.Encoding) -> String? {
        let encoding = LegacyCharsets.zeroExtended(encoding)
        return builtInName(for: encoding) ?? LegacyCharsets.charset(for: encoding)?.name
    }

    /// The name of one of Foundation's own encodings, or nil for any other.
    private static func builtInName(for encoding: String.Encoding) -> String? {
        switch encoding {
        case .utf8: return "utf-8"
        case .ascii: return "us-ascii"
        case .isoLatin1: return "iso-8859-1"
        case .isoLatin2: return "iso-8859-2"
        case .windowsCP1250: return "windows-1250"
        case .windowsCP1251: return "windows-1251"
        case .windowsCP1252: return "windows-1252"
        case .windowsCP1253: return "windows-1253"
        case .windowsCP1254: return "windows-1254"
        case .macOSRoman: return "macintosh"
        case .shiftJIS: return "shift_jis"
        case .japaneseEUC: return "euc-jp"
        case .iso2022JP: return "iso-2022-jp"
        case .nonLossyASCII: return "us-ascii"
        case .utf16: return "utf-16"
        case .utf16BigEndian: return "utf-16be"
        case .utf16LittleEndian: return "utf-16le"
        case .utf32: return "utf-32"
        case .utf32BigEndian: return "utf-32be"
        case .utf32LittleEndian: return "utf-32le"
        default: return nil
        }
    }

    /// Whether ASCII text encodes to the same bytes in `encoding` — required, because the
    /// boundary lines, part headers and percent escapes of a form body are ASCII.
    static func isASCIICompatible(_ encoding: String.Encoding) -> Bool {
        let encoding = LegacyCharsets.zeroExtended(encoding)
        switch encoding {
        case .utf16, .utf16BigEndian, .utf16LittleEndian, .utf32, .utf32BigEndian,
            .utf32LittleEndian, .iso2022JP:
            return false
        default:
            if builtInName(for: encoding) != nil { return true }
            guard let charset = LegacyCharsets.charset(for: encoding) else { return false }
            return LegacyCharsets.isASCIICompatible(charset)
        }
    }

    /// Throws ``FormDataError/unknownEncoding(rawValue:)`` when FormDataKit has no charset for
    /// `encoding` (no name, no converter), ``FormDataError/unsupportedEncoding(_:)`` when it has
    /// one that cannot carry a form body.
    package static func requireUsable(_ encoding: String.Encoding) throws(FormDataError) {
        guard name(for: encoding) != nil else { throw .unknownEncoding(rawValue: encoding.rawValue) }
        guard isASCIICompatible(encoding) else { throw .unsupportedEncoding(encoding) }
    }

    /// `data` read as text in `encoding`, or nil when the bytes are not valid in it (or
    /// FormDataKit has no converter for it). Strict: nothing is replaced. The inverse of
    /// ``encode(_:_:)``, through the same converters.
    package static func decode(_ data: Data, _ encoding: String.Encoding) -> String? {
        let encoding = LegacyCharsets.zeroExtended(encoding)
        if data.isEmpty { return "" }
        if encoding == .utf8 { return String(validating: data, as: UTF8.self) }
        if isASCIICompatible(encoding), data.allSatisfy({ $0 < 0x80 }) { return String(decoding: data, as: UTF8.self) }
        if builtInName(for: encoding) == nil, let charset = LegacyCharsets.charset(for: encoding) {
            return CharsetConverter.decode(data, charset)
        }
        if let replacement = LegacyCharsets.linuxReplacement(for: encoding) { return CharsetConverter.decode(data, replacement) }
        return String(data: data, encoding: encoding)
    }

    /// `string` in `encoding`, with no lossy conversion; nil when a character cannot be represented.
    ///
    /// Foundation's own encodings go through `String.data(using:)`, except where Foundation on
    /// Linux gets them wrong (``LegacyCharsets/linuxReplacement(for:)``); every other charset
    /// (GBK, GB18030, Big5, EUC-KR, KOI8-R, …) through ``CharsetConverter``: `iconv` on Linux,
    /// CoreFoundation on Apple platforms.
    package static func encode(_ string: String, _ encoding: String.Encoding) -> Data? {
        let encoding = LegacyCharsets.zeroExtended(encoding)
        if encoding == .utf8 { return Data(string.utf8) }
        if encoding == .ascii || encoding == .nonLossyASCII {
            return string.utf8.allSatisfy({ $0 < 0x80 }) ? Data(string.utf8) : nil
        }
        if builtInName(for: encoding) == nil, let charset = LegacyCharsets.charset(for: encoding) {
            if string.utf8.allSatisfy({ $0 < 0x80 }), LegacyCharsets.isASCIICompatible(charset) { return Data(string.utf8) }
            return CharsetConverter.encode(string, charset).map { Data($0) }
        }
        if string.utf8.allSatisfy({ $0 < 0x80 }) { return Data(string.utf8) }
        if let replacement = LegacyCharsets.linuxReplacement(for: encoding) {
            return CharsetConverter.encode(string, replacement).map { Data($0) }
        }
        return string.data(using: encoding, allowLossyConversion: false)
    }

    /// Throws ``FormDataError/unencodableString(field:role:encoding:)`` naming the field unless
    /// `string` can be written in `encoding` (checked without keeping the bytes: every string is
    /// UTF-8, and ASCII text is ASCII in every ASCII-compatible encoding).
    package static func requireEncodable(
        _ string: String, _ encoding: String.Encoding, field: String, role: FormDataError.FieldRole
    ) throws(FormDataError) {
        if encoding == .utf8 { return }
        if isASCIICompatible(encoding), string.utf8.allSatisfy({ $0 < 0x80 }) { return }
        _ = try encode(string, encoding, field: field, role: role)
    }

    /// `string` in `encoding`, or ``FormDataError/unencodableString(field:role:encoding:)`` naming the field.
    package static func encode(
        _ string: String, _ encoding: String.Encoding, field: String, role: FormDataError.FieldRole
    ) throws(FormDataError) -> Data {
        guard let data = encode(string, encoding) else {
            throw .unencodableString(field: field, role: role, encoding: encoding)
        }
        return data
    }
}
