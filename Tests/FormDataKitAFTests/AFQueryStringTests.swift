import FormDataKitAF
import Foundation
import Testing

/// The escaping set and the flattening rules of the reference (§2.1, §2.2 worked examples).
@Suite("AF query strings")
struct AFQueryStringTests {
    @Test func escapingKeepsOnlyUnreservedSlashAndQuestionMark() {
        #expect(AFPercentEscapedStringFromString("AZaz09-._~/?") == "AZaz09-._~/?")
        #expect(AFPercentEscapedStringFromString("a b") == "a%20b")
        #expect(AFPercentEscapedStringFromString("100%") == "100%25")
        #expect(AFPercentEscapedStringFromString("\"<>\\^`{|}") == "%22%3C%3E%5C%5E%60%7B%7C%7D")
        #expect(AFPercentEscapedStringFromString("\u{7F}\t") == "%7F%09")
        #expect(AFPercentEscapedStringFromString("é") == "%C3%A9")
        #expect(AFPercentEscapedStringFromString("") == "")
    }

    @Test func longCJKStringsEqualWholeStringEncoding() {
        let text = String(repeating: "漢字かな", count: 200)
        let escaped = AFPercentEscapedStringFromString(text)
        #expect(escaped == String(repeating: "%E6%BC%A2%E5%AD%97%E3%81%8B%E3%81%AA", count: 200))
    }

    @Test func flattening() {
        let cases: [([AnyHashable: Any], String)] = [
            (["b": "2", "a": "1"] as [AnyHashable: Any], "a=1&b=2"),
            (["user": ["name": "x", "age": 3] as [String: Any]], "user%5Bage%5D=3&user%5Bname%5D=x"),
            (["ids": [1, 2]], "ids%5B%5D=1&ids%5B%5D=2"),
            (["a": [["b": 1], ["c": 2]]], "a%5B%5D%5Bb%5D=1&a%5B%5D%5Bc%5D=2"),
            (["a": [[1, 2]]], "a%5B%5D%5B%5D=1&a%5B%5D%5B%5D=2"),
            (["s": Set(["b", "a"])], "s=a&s=b"),
            (["n": NSNull()], "n"),
            (["e": ""], "e="),
            (["k": [Int]()], ""),
            (["k": [String: Int]()], ""),
            ([:], ""),
            (["B": 1, "a": 2], "B=1&a=2"),
            (["10": 1, "2": 2], "10=1&2=2"),
            (["t": true, "f": false], "f=0&t=1"),
            (["d": 1.5, "i": 1.0], "d=1.5&i=1"),
            (["f": Float(1.1), "n": NSNumber(value: 0.25), "m": NSNumber(value: 2.0)], "f=1.1&m=2&n=0.25"),
            (["o": Optional<String>.none as Any], "o"),
        ]
        for (parameters, expected) in cases {
            #expect(AFQueryStringFromParameters(parameters) == expected, "\(parameters)")
        }
    }

    @Test("names sort as -[NSString compare:] sorts them: ASCII of every kind, and non-ASCII beside it")
    func namesSortAsNSStringCompare() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = (0x20...0x7E).map { Character(Unicode.Scalar($0)) } + ["é", "e\u{301}", "Z", "ß", "漢"]
        var names = Set<String>()
        while names.count < 300 {
            names.insert(String((0..<Int.random(in: 1...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        let parameters = Dictionary(uniqueKeysWithValues: names.map { ($0 as AnyHashable, "v" as Any) })
        let expected = names.sorted { NSString(string: $0).compare($1) == .orderedAscending }
            .map { AFPercentEscapedStringFromString($0) + "=v" }.joined(separator: "&")
        #expect(AFQueryStringFromParameters(parameters) == expected)
    }

    @Test func foundationCollectionsFlattenLikeSwiftOnes() {
        let parameters: [AnyHashable: Any] = [
            "d": NSDictionary(dictionary: ["y": 2, "x": 1]),
            "a": NSArray(array: ["p", "q"]),
            "s": NSSet(array: ["b", "a"]),
            "n": NSNumber(value: 7),
        ]
        #expect(AFQueryStringFromParameters(parameters) == "a%5B%5D=p&a%5B%5D=q&d%5Bx%5D=1&d%5By%5D=2&n=7&s=a&s=b")
    }

    @Test("a legacy charset (GBK) for a URL-encoded body: the escaped ASCII body, charset named, no error")
    func legacyCharsetURLEncodedBody() throws {
        let serializer = AFHTTPRequestSerializer()
        serializer.stringEncoding = .legacyGBK
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com/f", parameters: ["名": "值 1"])
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "%E5%90%8D=%E5%80%BC%201")
    }
}
