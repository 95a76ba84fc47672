@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting
import Testing
@testable import FormDataKit

/// Legacy charsets (issue 18): GBK, GB18030, Big5, EUC-KR, Shift_JIS, EUC-JP and KOI8-R bodies,
/// byte for byte against Python's codecs; strictness; names and raw values.
@Suite("Legacy charsets")
struct LegacyCharsetTests {
    /// One charset: the encoding, Python's codec for it, the `charset=` name, and a form with
    /// non-ASCII names, values and a file name.
    struct Case: Sendable, CustomTestStringConvertible {
        var encoding: String.Encoding
        var codec: String
        var charset: String
        var name: String
        var value: String
        var fileField: String
        var fileName: String
        var testDescription: String { "\(charset) (\(codec))" }
    }

    static let cases: [Case] = [
        Case(
            encoding: .legacyGBK, codec: "gbk", charset: "gbk",
            name: "姓名", value: "张三 你好，世界！《测试》", fileField: "附件", fileName: "报告 2024.txt"),
        Case(
            encoding: .legacyGB18030, codec: "gb18030", charset: "gb18030",
            name: "名字", value: "中文 € 😀 ㈠ 𠀀", fileField: "文件", fileName: "图片😀.png"),
        Case(
            encoding: .legacyBig5, codec: "big5", charset: "big5",
            name: "姓名", value: "臺灣 繁體中文 許功蓋", fileField: "檔案", fileName: "報告.txt"),
        Case(
            encoding: .legacyEUCKR, codec: "euc_kr", charset: "euc-kr",
            name: "이름", value: "홍길동 안녕하세요 漢字", fileField: "파일", fileName: "보고서.txt"),
        // Foundation's own `.shiftJIS` (code page 932 on every platform) and CoreFoundation's
        // plain Shift_JIS (kCFStringEncodingShiftJIS, 0x80000A01, through iconv): both agree with
        // Python's shift_jis on JIS X 0208 text. 表 and ソ have 0x5C (`\`) as their second byte.
        Case(
            encoding: .shiftJIS, codec: "shift_jis", charset: "shift_jis",
            name: "名前", value: "日本語テスト ｶﾀｶﾅ 表ソ", fileField: "資料", fileName: "予定表.txt"),
        Case(
            encoding: String.Encoding(rawValue: 0x8000_0A01), codec: "shift_jis", charset: "shift_jis",
            name: "名前", value: "日本語テスト ｶﾀｶﾅ 表ソ", fileField: "資料", fileName: "予定表.txt"),
        Case(
            encoding: .japaneseEUC, codec: "euc_jp", charset: "euc-jp",
            name: "名前", value: "日本語テスト ｶﾀｶﾅ 表ソ", fileField: "資料", fileName: "予定表.txt"),
        Case(
            encoding: .legacyKOI8R, codec: "koi8_r", charset: "koi8-r",
            name: "Имя", value: "Привет, мир! Ёё ЪЬ", fileField: "файл", fileName: "отчёт.txt"),
    ]

    /// File content with bytes that are not text in any charset.
    static let fileBytes = Data([0x00, 0xFF, 0x5C, 0x22, 0x0D, 0x0A, 0x80, 0xA4])

    /// What Python computes for a form: the URL-encoded body (FormDataKit's escape rule: only
    /// `A–Z a–z 0–9 - . _` kept, uppercase `%XX`), the multipart body, and single strings.
    struct Oracle: Decodable {
        var urlencoded: String
        var multipart: String
        var strings: [String?]
    }

    static let oracleScript = #"""
        import json, sys
        spec = json.loads(sys.argv[1])
        codec = spec["codec"]
        def enc(s):
            try:
                return s.encode(codec)
            except UnicodeEncodeError:
                return None
        keep = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._")
        def esc(s):
            return "".join(chr(b) if b in keep else "%%%02X" % b for b in enc(s))
        out = {"urlencoded": "&".join(esc(n) + "=" + esc(v) for n, v in spec["values"]).encode("ascii").hex()}
        b = spec["boundary"].encode("ascii")
        body = b""
        for n, v in spec["values"]:
            body += b"--" + b + b'\r\nContent-Disposition: form-data; name="' + enc(n) + b'"\r\n\r\n' + enc(v) + b"\r\n"
        for n, fn, ct, data in spec["files"]:
            body += (b"--" + b + b'\r\nContent-Disposition: form-data; name="' + enc(n) + b'"; filename="' + enc(fn)
                     + b'"\r\nContent-Type: ' + ct.encode("ascii") + b"\r\n\r\n" + bytes.fromhex(data) + b"\r\n")
        body += b"--" + b + b"--\r\n"
        out["multipart"] = body.hex()
        out["strings"] = [None if enc(s) is None else enc(s).hex() for s in spec["strings"]]
        print(json.dumps(out))
        """#

    static func oracle(
        codec: String, values: [[String]] = [], files: [[String]] = [], strings: [String] = []
    ) async throws -> Oracle {
        let spec: [String: Any] = ["codec": codec, "boundary": fixedBoundary, "values": values, "files": files, "strings": strings]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
        let output = try await SpawnedProcess.run("/usr/bin/env", ["python3", "-c", oracleScript, json])
        guard output.termination.succeeded else {
            throw PythonFailure(message: String(decoding: output.stderr, as: UTF8.self))
        }
        return try JSONDecoder().decode(Oracle.self, from: output.stdout)
    }

    static func hex(_ text: String?) -> Data? {
        guard let text else { return nil }
        var data = Data(capacity: text.utf8.count / 2)
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            data.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    static func hexString(_ data: Data?) -> String {
        data.map { $0.map { String(format: "%02X", $0) }.joined(separator: " ") } ?? "nil"
    }

    // MARK: - Bodies, byte for byte

    @Test("URL-encoded body in the charset, byte for byte as Python encodes and escapes it", arguments: cases)
    func urlEncoded(_ c: Case) async throws {
        let oracle = try await Self.oracle(codec: c.codec, values: [[c.name, c.value], ["plain", "a b~c"], [c.fileField, c.fileName]])
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = c.encoding
        request.addPostValue(c.value, forKey: c.name)
        request.addPostValue("a b~c", forKey: "plain")
        request.addPostValue(c.fileName, forKey: c.fileField)
        try request.buildPostBody()
        let expected = try #require(Self.hex(oracle.urlencoded))
        #expect(
            request.postBody == expected,
            "\(String(decoding: request.postBody ?? Data(), as: UTF8.self)) != \(String(decoding: expected, as: UTF8.self))")
        #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=\(c.charset)")
    }

    @Test("Multipart body in the charset: names, values and file names byte for byte as Python encodes them", arguments: cases)
    func multipart(_ c: Case) async throws {
        let oracle = try await Self.oracle(
            codec: c.codec, values: [[c.name, c.value], ["plain", "ascii only"]],
            files: [[c.fileField, c.fileName, "text/plain", Self.fileBytes.map { String(format: "%02x", $0) }.joined()]])
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = c.encoding
        request.postFormat = .multipartFormData
        request.multipartBoundary = fixedBoundary
        request.addPostValue(c.value, forKey: c.name)
        request.addPostValue("ascii only", forKey: "plain")
        request.addData(Self.fileBytes, withFileName: c.fileName, andContentType: "text/plain", forKey: c.fileField)
        try request.buildPostBody()
        let body = try sentBody(request)
        let expected = try #require(Self.hex(oracle.multipart))
        #expect(body == expected, "\(Self.hexString(body))\n!=\n\(Self.hexString(expected))")
        #expect(request.requestHeaders["Content-Type"] == "multipart/form-data; charset=\(c.charset); boundary=\(fixedBoundary)")
        #expect(request.requestHeaders["Content-Length"] == "\(expected.count)")
    }

    @Test("The converter gives Python's bytes for longer texts too (what the AF serializer's parameters go through)", arguments: cases)
    func converterAgreesWithPython(_ c: Case) async throws {
        let texts = [c.name + c.value + c.fileName, String(repeating: c.value, count: 200), "", "ascii \u{7F}\u{1}"]
        let oracle = try await Self.oracle(codec: c.codec, strings: texts)
        for (text, expected) in zip(texts, oracle.strings) {
            let data = try IANACharset.encode(text, c.encoding, field: "f", role: .value)
            #expect(data == Self.hex(expected), "\(text.prefix(20))…: \(Self.hexString(data)) != \(expected ?? "nil")")
        }
    }

    // MARK: - Strictness

    @Test("A character the charset lacks is unencodableString naming the field and its role")
    func unencodable() throws {
        let value = FormDataRequest(url: anyURL)
        value.stringEncoding = .legacyKOI8R
        value.addPostValue("Привет", forKey: "ok")
        value.addPostValue("Привет 😀", forKey: "greeting")
        #expect(throws: FormDataError.unencodableString(field: "greeting", role: .value, encoding: .legacyKOI8R)) {
            try value.buildPostBody()
        }
        value.postFormat = .multipartFormData
        #expect(throws: FormDataError.unencodableString(field: "greeting", role: .value, encoding: .legacyKOI8R)) {
            try value.buildPostBody()
        }
        #expect(
            FormDataError.unencodableString(field: "greeting", role: .value, encoding: .legacyKOI8R).description
                == "The value of field 'greeting' cannot be represented in koi8-r")

        let name = FormDataRequest(url: anyURL)
        name.stringEncoding = .legacyEUCKR
        name.addPostValue("x", forKey: "名前 ж€😀")
        #expect(throws: FormDataError.unencodableString(field: "名前 ж€😀", role: .name, encoding: .legacyEUCKR)) {
            try name.buildPostBody()
        }

        let file = FormDataRequest(url: anyURL)
        file.stringEncoding = .legacyBig5
        file.addData(Data("x".utf8), withFileName: "照片😀.jpg", andContentType: "image/jpeg", forKey: "photo")
        #expect(throws: FormDataError.unencodableString(field: "photo", role: .fileName, encoding: .legacyBig5)) {
            try file.buildPostBody()
        }
    }

    @Test("Python agrees on what is unencodable: emoji in KOI8-R, GBK, Big5, EUC-KR, Shift_JIS, EUC-JP; Hangul outside KS X 1001 in EUC-KR")
    func unencodableAgreesWithPython() async throws {
        let checks: [(String.Encoding, String, String)] = [
            (.legacyKOI8R, "koi8_r", "😀"), (.legacyKOI8R, "koi8_r", "中"), (.legacyGBK, "gbk", "😀"),
            (.legacyBig5, "big5", "😀"), (.legacyEUCKR, "euc_kr", "😀"), (.shiftJIS, "shift_jis", "😀"),
            (.japaneseEUC, "euc_jp", "😀"), (.legacyKOI8R, "koi8_r", "é"),
        ]
        for (encoding, codec, text) in checks {
            let oracle = try await Self.oracle(codec: codec, strings: [text])
            #expect(oracle.strings == [nil], "Python encodes \(text) in \(codec)")
            #expect(IANACharset.encode(text, encoding) == nil, "\(text) in \(codec)")
        }
        #if os(Linux)
        // 똠 is not among KS X 1001's 2,350 syllables: Python writes an 8-byte jamo sequence,
        // glibc refuses; CP949 has it.
        #expect(IANACharset.encode("똠", .legacyEUCKR) == nil)
        #endif
        #expect(IANACharset.encode("똠", try #require(String.Encoding.iana("cp949"))) == Data([0x8C, 0x63]))
    }

    #if os(Linux)
    @Test("No one-way mappings: characters glibc would write as another character are refused")
    func noLossyMappings() {
        // glibc's EUC-JP and Shift_JIS write ¥ (U+00A5) as 0x5C and ‾ as 0x7E, which decode as \ and ~
        // (Python's euc_jp and shift_jis do the same): the server would get a different character.
        #expect(IANACharset.encode("¥100", .japaneseEUC) == nil)
        #expect(IANACharset.encode("‾", .japaneseEUC) == nil)
        #expect(IANACharset.encode("¥100", String.Encoding(rawValue: 0x8000_0A01)) == nil)
        // Full-width ￠ would come back as ¢ from glibc's Shift_JIS; ₩ as ￦ from its EUC-KR.
        #expect(IANACharset.encode("￠", String.Encoding(rawValue: 0x8000_0A01)) == nil)
        #expect(IANACharset.encode("₩", .legacyEUCKR) == nil)
        // Foundation's .shiftJIS (code page 932) refuses ¥ too.
        #expect(IANACharset.encode("¥", .shiftJIS) == nil)
    }
    #endif

    @Test("Foundation's .shiftJIS is code page 932 (Windows-31J); CoreFoundation's plain Shift_JIS is not")
    func shiftJISVariants() async throws {
        let text = "①～∥"
        let cp932 = try await Self.oracle(codec: "cp932", strings: [text])
        #expect(IANACharset.encode(text, .shiftJIS) == Self.hex(cp932.strings[0]))
        #expect(IANACharset.encode(text, String.Encoding(rawValue: 0x8000_0A01)) == nil)
    }

    // MARK: - Names and raw values

    @Test("iana(_:) resolves names without case; unknown names and iconv suffixes are nil")
    func ianaNames() throws {
        let expected: [(String, String.Encoding)] = [
            ("GBK", .legacyGBK), ("gbk", .legacyGBK), (" GbK ", .legacyGBK), ("CP936", .legacyGBK),
            ("windows-936", .legacyGBK), ("GB18030", .legacyGB18030), ("gb18030", .legacyGB18030),
            ("Big5", .legacyBig5), ("BIG5", .legacyBig5), ("csBig5", .legacyBig5),
            ("EUC-KR", .legacyEUCKR), ("euc-kr", .legacyEUCKR), ("KOI8-R", .legacyKOI8R), ("koi8-r", .legacyKOI8R),
            ("Shift_JIS", .shiftJIS), ("SJIS", .shiftJIS), ("windows-31j", .shiftJIS), ("EUC-JP", .japaneseEUC),
            ("UTF-8", .utf8), ("utf8", .utf8), ("ISO-8859-1", .isoLatin1), ("latin1", .isoLatin1),
            ("windows-1252", .windowsCP1252), ("cp1251", .windowsCP1251), ("ISO-2022-JP", .iso2022JP),
            ("ISO-8859-5", String.Encoding(rawValue: 0x8000_0205)), ("iso-8859-15", String.Encoding(rawValue: 0x8000_020F)),
            ("windows-1255", String.Encoding(rawValue: 0x8000_0505)), ("CP866", String.Encoding(rawValue: 0x8000_041B)),
            ("IBM437", String.Encoding(rawValue: 0x8000_0400)), ("cp949", String.Encoding(rawValue: 0x8000_0422)),
            ("GB2312", String.Encoding(rawValue: 0x8000_0930)), ("Big5-HKSCS", String.Encoding(rawValue: 0x8000_0A06)),
            ("KOI8-U", String.Encoding(rawValue: 0x8000_0A08)), ("x-mac-cyrillic", String.Encoding(rawValue: 0x8000_0007)),
        ]
        for (name, encoding) in expected {
            #expect(String.Encoding.iana(name) == encoding, "\(name)")
        }
        for name in ["no-such-charset", "", "   ", "GBK//TRANSLIT", "GBK//IGNORE", "gbk,utf-8", "../../etc", "utf-8 x", "gbk\u{0}"] {
            #expect(String.Encoding.iana(name) == nil, "\(name.debugDescription)")
        }
    }

    @Test("The Apple raw values (0x80000000 | CFStringEncoding) are the named constants and carry IANA names")
    func appleRawValues() {
        #expect(String.Encoding.legacyGB18030.rawValue == 0x8000_0632)  // kCFStringEncodingGB_18030_2000
        #expect(String.Encoding.legacyGBK.rawValue == 0x8000_0631)  // kCFStringEncodingGBK_95
        #expect(String.Encoding.legacyBig5.rawValue == 0x8000_0A03)  // kCFStringEncodingBig5
        #expect(String.Encoding.legacyEUCKR.rawValue == 0x8000_0940)  // kCFStringEncodingEUC_KR
        #expect(String.Encoding.legacyKOI8R.rawValue == 0x8000_0A02)  // kCFStringEncodingKOI8_R
        let names: [(UInt, String)] = [
            (0x8000_0632, "gb18030"), (0x8000_0631, "gbk"), (0x8000_0421, "gbk"), (0x8000_0A03, "big5"),
            (0x8000_0940, "euc-kr"), (0x8000_0A02, "koi8-r"), (0x8000_0A01, "shift_jis"), (0x8000_0920, "euc-jp"),
            (0x8000_0205, "iso-8859-5"), (0x8000_041B, "cp866"), (0x8000_0505, "windows-1255"),
            (0x8000_0422, "cp949"), (0x8000_0930, "gb2312"), (0x8000_0A08, "koi8-u"),
            (8, "shift_jis"), (3, "euc-jp"), (4, "utf-8"),
        ]
        for (raw, name) in names {
            #expect(IANACharset.name(for: String.Encoding(rawValue: raw)) == name, "0x\(String(raw, radix: 16))")
        }
        // GBK under either CoreFoundation constant gives the same bytes.
        #expect(IANACharset.encode("中文€", String.Encoding(rawValue: 0x8000_0421)) == IANACharset.encode("中文€", .legacyGBK))
        #expect(IANACharset.name(for: String.Encoding(rawValue: 0x8000_7777)) == nil)
    }

    @Test("ASCII-compatible charsets are usable; stateful and non-ASCII ones are refused for bodies")
    func asciiCompatibility() throws {
        let usable: [String.Encoding] =
            [
                .legacyGBK, .legacyGB18030, .legacyBig5, .legacyEUCKR, .legacyKOI8R, .shiftJIS, .japaneseEUC,
                String.Encoding(rawValue: 0x8000_0A01), String.Encoding(rawValue: 0x8000_0421),
            ]
            + ["cp949", "gb2312", "big5-hkscs", "koi8-u", "iso-8859-5", "windows-1255", "windows-1258", "cp866", "x-mac-cyrillic"]
            .compactMap { String.Encoding.iana($0) }
        #expect(usable.count == 18)
        for encoding in usable {
            #expect(IANACharset.isASCIICompatible(encoding), "\(IANACharset.name(for: encoding) ?? "?")")
        }
        // ISO-2022 escapes, VISCII's letters on control codes, UTF-16; code page 864 reads `%` as
        // the Arabic percent sign and Johab reads `\` as the won sign.
        var refused = ["iso-2022-kr", "iso-2022-cn", "viscii", "utf-16"]
        #if os(Linux)
        refused += ["cp864", "johab"]  // as glibc's converters read them
        #endif
        for name in refused {
            let encoding = try #require(String.Encoding.iana(name), "\(name)")
            #expect(!IANACharset.isASCIICompatible(encoding), "\(name)")
            let request = FormDataRequest(url: anyURL)
            request.stringEncoding = encoding
            request.addPostValue("v", forKey: "k")
            #expect(throws: FormDataError.unsupportedEncoding(encoding)) { try request.buildPostBody() }
        }
        #expect(!IANACharset.isASCIICompatible(String.Encoding(rawValue: 0x8000_7777)))
    }

    #if os(Linux)
    @Test("Linux: any other charset iconv knows is selectable by name, with a stable value in this process")
    func otherIconvCharsets() async throws {
        let tis = try #require(String.Encoding.iana("TIS-620"))
        #expect(String.Encoding.iana("tis-620") == tis)
        #expect(IANACharset.name(for: tis) == "tis-620")
        #expect(IANACharset.isASCIICompatible(tis))
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = tis
        request.addPostValue("ภาษาไทย", forKey: "ชื่อ")
        try request.buildPostBody()
        let oracle = try await Self.oracle(codec: "tis_620", values: [["ชื่อ", "ภาษาไทย"]])
        #expect(request.postBody == Self.hex(oracle.urlencoded))
        #expect(request.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=tis-620")
        // Stateful ones iconv knows are found but refused for bodies.
        let utf7 = try #require(String.Encoding.iana("UTF-7"))
        #expect(!IANACharset.isASCIICompatible(utf7))
    }

    @Test("Linux: .macOSRoman goes through iconv (Foundation on Linux writes wrong bytes)")
    func macRoman() async throws {
        let oracle = try await Self.oracle(codec: "mac_roman", strings: ["Café ñ ™ Å"])
        #expect(IANACharset.encode("Café ñ ™ Å", .macOSRoman) == Self.hex(oracle.strings[0]))
    }
    #endif

    struct PythonFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { "python3 failed: \(message)" }
    }
}
