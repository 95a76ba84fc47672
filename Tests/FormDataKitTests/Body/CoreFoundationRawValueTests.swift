@testable import FormDataKitBody
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// Issue 55, point 7: `String.Encoding(rawValue: 0x8000_0000 | CFStringEncoding)` as ported code
/// passes it (`-2147483623 as UInt` for kCFStringEncodingMacChineseSimp). Every CoreFoundation
/// encoding glibc's `iconv` serves exactly has its charset; any other value is refused as unknown,
/// naming the value and pointing at `String.Encoding.iana(_:)`.
@Suite("CoreFoundation raw values")
struct CoreFoundationRawValueTests {
    private static let anyURL = URL(string: "http://localhost/upload")!

    private static func buildError(_ encoding: String.Encoding) -> FormDataError? {
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = encoding
        request.addPostValue("中文", forKey: "q")
        do {
            try request.buildPostBody()
            return nil
        } catch let error as FormDataError {
            return error
        } catch {
            return nil
        }
    }

    @Test("kCFStringEncodingMacChineseSimp (no exact iconv converter): unknown, naming the value and pointing at .iana(_:)")
    func macChineseSimpIsUnknown() throws {
        // As Objective-C code passes it: a negative literal, sign-extended to 64 bits.
        let literal = UInt(bitPattern: -2_147_483_623)
        #expect(literal == 0xFFFF_FFFF_8000_0019)
        let error = try #require(Self.buildError(String.Encoding(rawValue: literal)))
        #expect(error == .unknownEncoding(rawValue: literal))
        #expect(
            error.description
                == "The string encoding with raw value 0xFFFFFFFF80000019 (kCFStringEncodingMacChineseSimp) is not one FormDataKit can convert on this platform: choose the charset by its IANA name with String.Encoding.iana(_:), e.g. .iana(\"gb2312\")"
        )
        #expect(!error.description.contains("ASCII-compatible"))
        #expect(error.asiErrorCode == 6)
        // What CFStringConvertEncodingToNSStringEncoding returns: the same, zero-extended.
        let converted = try #require(Self.buildError(String.Encoding(rawValue: 0x8000_0019)))
        #expect(converted == .unknownEncoding(rawValue: 0x8000_0019))
        #expect(converted.description.hasPrefix("The string encoding with raw value 0x80000019 (kCFStringEncodingMacChineseSimp) is not"))
    }

    @Test("A sign-extended number of an encoding iconv serves works as the 32-bit one")
    func signExtendedServedValue() throws {
        let request = FormDataRequest(url: Self.anyURL)
        request.postFormat = .urlEncoded
        request.stringEncoding = String.Encoding(rawValue: UInt(bitPattern: -2_147_482_063))  // kCFStringEncodingGBK_95, 0x80000631
        request.addPostValue("中文", forKey: "q")
        try request.buildPostBody()
        #expect(request.postBody == Data("q=%D6%D0%CE%C4".utf8))
        #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=gbk")
    }

    @Test("Any other unknown value: the same error, with a generic suggestion")
    func otherUnknownValues() throws {
        for raw: UInt in [0x8000_7777, 0x8000_0001, 0x7123_4567, 0x8000_0B01] {
            let error = try #require(Self.buildError(String.Encoding(rawValue: raw)), "0x\(String(raw, radix: 16))")
            #expect(error == .unknownEncoding(rawValue: raw))
            #expect(error.description.contains("0x\(String(raw, radix: 16, uppercase: true))"), "\(error)")
            #expect(error.description.contains("String.Encoding.iana(_:)"), "\(error)")
        }
        // A value that is known but cannot carry a form body stays unsupportedEncoding.
        #expect(Self.buildError(.utf16) == .unsupportedEncoding(.utf16))
    }

    /// CoreFoundation encodings added for issue 55 (the CFStringEncoding, the name CoreFoundation
    /// gives it): each one's converter is one `iconv -l` lists.
    static let added: [(UInt32, String)] = [
        (0x0000, "macintosh"), (0x0600, "us-ascii"), (0x0820, "iso-2022-jp"), (0x0801, "iso-2022-jp-2"),
        (0x0803, "iso-2022-jp-3"), (0x0831, "iso-2022-cn-ext"), (0x0A10, "utf7-imap"), (0x0C02, "ibm037"),
        (0x0100, "utf-16"), (0x0400_0100, "utf-7"), (0x0800_0100, "utf-8"),
    ]

    @Test("The added CoreFoundation raw values carry CoreFoundation's names")
    func addedNames() {
        for (cf, name) in Self.added {
            let encoding = String.Encoding(rawValue: 0x8000_0000 | UInt(cf))
            #expect(IANACharset.name(for: encoding) == name, "0x\(String(cf, radix: 16))")
        }
    }

    @Test("Usable ones build exact bytes; stateful and non-ASCII ones are refused by name (unsupportedEncoding)")
    func addedBytesAndRefusals() throws {
        let cases: [(UInt, String, [UInt8])] = [
            (0x8000_0000, "macintosh", [0x71, 0x3D, 0x63, 0x61, 0x66, 0x25, 0x38, 0x45]),  // q=caf%8E
            (0x8000_0600, "us-ascii", Array("q=cafe".utf8)),
            (0x8800_0100, "utf-8", Array("q=caf%C3%A9".utf8)),
        ]
        for (raw, charset, bytes) in cases {
            let request = FormDataRequest(url: Self.anyURL)
            request.postFormat = .urlEncoded
            request.stringEncoding = String.Encoding(rawValue: raw)
            request.addPostValue(charset == "us-ascii" ? "cafe" : "café", forKey: "q")
            try request.buildPostBody()
            #expect(request.postBody.map { [UInt8]($0) } == bytes, "\(charset)")
            #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=\(charset)")
        }
        for raw: UInt in [0x8000_0820, 0x8000_0801, 0x8000_0803, 0x8000_0831, 0x8000_0A10, 0x8000_0C02, 0x8000_0100, 0x8400_0100] {
            let encoding = String.Encoding(rawValue: raw)
            #expect(Self.buildError(encoding) == .unsupportedEncoding(encoding), "0x\(String(raw, radix: 16))")
        }
    }

    #if os(Linux)
    @Test("Linux: every converter the CoreFoundation tables name is one glibc iconv knows")
    func everyConverterIsKnownToIconv() {
        var converters: [String] = LegacyCharsets.named.values.map(\.converter)
        converters += (1...16).filter { $0 != 12 }.map { "ISO-8859-\($0)" }
        converters += LegacyCharsets.codePages.keys.map { "CP\($0)" }
        for converter in converters { #expect(Iconv.knows(converter), "\(converter)") }
    }
    #endif
}
