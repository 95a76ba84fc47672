#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Strict conversion of a string into a legacy charset (one ``LegacyCharsets`` knows): glibc's
/// `iconv` on Linux, Foundation (CoreFoundation's converters) on Apple platforms.
///
/// Strict means: no transliteration, no `//IGNORE`, and no lossy mapping either — the bytes are
/// decoded again and must give back the same text (compared with canonical equivalence, as
/// `String` compares). Converters map some characters one way only (glibc's EUC-JP writes `¥`
/// U+00A5 as 0x5C, which every decoder reads as `\`; its EUC-KR writes `₩` U+20A9 as the
/// full-width won sign): such a character is refused like any other unencodable one.
enum CharsetConverter {
    /// `string` in `charset`, or nil when a character cannot be represented exactly (or the
    /// platform has no converter for the charset).
    static func encode(_ string: String, _ charset: LegacyCharset) -> [UInt8]? {
        if string.isEmpty { return [] }
        if charset.jisRoman, string.unicodeScalars.contains(where: { $0 == "\u{A5}" || $0 == "\u{203E}" }) { return nil }
        #if canImport(Glibc) || canImport(Musl)
        var text = string
        let encoded = text.withUTF8 { Iconv.convert(UnsafeRawBufferPointer($0), from: "UTF-8", to: charset.converterName) }
        guard let encoded,
            let decoded = encoded.withUnsafeBytes({ Iconv.convert($0, from: charset.converterName, to: "UTF-8") }),
            roundTrips(string, String(decoding: decoded, as: UTF8.self), charset)
        else { return nil }
        return encoded
        #else
        guard let data = string.data(using: charset.encoding, allowLossyConversion: false),
            let decoded = String(data: data, encoding: charset.encoding),
            roundTrips(string, decoded, charset)
        else { return nil }
        return [UInt8](data)
        #endif
    }

    /// `bytes` read as text in `charset`, or nil when they are not valid in it (or the platform
    /// has no converter for the charset).
    static func decode(_ bytes: Data, _ charset: LegacyCharset) -> String? {
        if bytes.isEmpty { return "" }
        #if canImport(Glibc) || canImport(Musl)
        guard let decoded = bytes.withUnsafeBytes({ Iconv.convert($0, from: charset.converterName, to: "UTF-8") }) else { return nil }
        return String(decoding: decoded, as: UTF8.self)
        #else
        return String(data: bytes, encoding: charset.encoding)
        #endif
    }

    /// Whether `decoded` (the encoded bytes read back) is `original` — with JIS X 0201's `¥` and
    /// `‾` read as the ASCII `\` and `~` they are to servers, for a ``LegacyCharset/jisRoman``
    /// converter (`original` has neither: ``encode(_:_:)`` refuses them first).
    private static func roundTrips(_ original: String, _ decoded: String, _ charset: LegacyCharset) -> Bool {
        guard charset.jisRoman else { return decoded == original }
        var ascii = String.UnicodeScalarView()
        for scalar in decoded.unicodeScalars {
            ascii.append(scalar == "\u{A5}" ? "\\" : scalar == "\u{203E}" ? "~" : scalar)
        }
        return String(ascii) == original
    }
}

#if canImport(Glibc) || canImport(Musl)
/// glibc's `iconv`, one conversion descriptor per call (`iconv_open` costs well under a
/// microsecond once the charset's module is loaded, and a descriptor is not thread-safe).
enum Iconv {
    /// Whether `iconv` can convert from UTF-8 to `name`.
    static func knows(_ name: String) -> Bool {
        guard let descriptor = iconv_open(name, "UTF-8"), Int(bitPattern: descriptor) != -1 else { return false }
        iconv_close(descriptor)
        return true
    }

    /// `input` converted from charset `from` to charset `to`; nil when either charset is unknown,
    /// when a character has no mapping in `to` (`EILSEQ`), when the input is invalid or
    /// incomplete, or when the converter reports an irreversible (lossy) conversion.
    static func convert(_ input: UnsafeRawBufferPointer, from: String, to: String) -> [UInt8]? {
        guard !input.isEmpty, let base = input.baseAddress else { return [] }
        guard let descriptor = iconv_open(to, from), Int(bitPattern: descriptor) != -1 else { return nil }
        defer { iconv_close(descriptor) }
        var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self))
        var inLeft = input.count
        var output = [UInt8](repeating: 0, count: input.count * 2 + 16)
        var produced = 0
        var flushing = false
        while true {
            // One call: the input (or, once it is all consumed, the final shift sequence of a
            // stateful charset) into the free end of `output`.
            let (result, error): (Int, Int32) = output.withUnsafeMutableBytes { out in
                var outPointer: UnsafeMutablePointer<CChar>? = (out.baseAddress! + produced).assumingMemoryBound(to: CChar.self)
                var outLeft = out.count - produced
                let result =
                    flushing
                    ? iconv(descriptor, nil, nil, &outPointer, &outLeft)
                    : iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                let error = result == -1 ? errno : 0
                produced = out.count - outLeft
                return (result, error)
            }
            if result == -1 {
                guard error == E2BIG else { return nil }  // EILSEQ, EINVAL: not representable, or bad input
                output.append(contentsOf: repeatElement(0, count: output.count))
                continue
            }
            if result > 0 { return nil }  // irreversible conversions: lossy
            if flushing { break }
            flushing = true
        }
        output.removeSubrange(produced...)
        return output
    }
}
#endif
