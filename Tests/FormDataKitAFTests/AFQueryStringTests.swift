import FormDataKitAF
@testable import FormDataKitEngine
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

    @Test("ASCII names of every kind sort exactly as -[NSString compare:] sorts them", arguments: UInt64(1)...20)
    func asciiNamesSortAsNSStringCompare(seed: UInt64) {
        let names = Self.randomNames(seed: seed, alphabet: (0x20...0x7E).map { Character(Unicode.Scalar($0)) })
        let parameters = Dictionary(uniqueKeysWithValues: names.map { ($0 as AnyHashable, "v" as Any) })
        let expected = names.sorted { NSString(string: $0).compare($1) == .orderedAscending }
            .map { AFPercentEscapedStringFromString($0) + "=v" }.joined(separator: "&")
        #expect(AFQueryStringFromParameters(parameters) == expected)
    }

    /// With non-ASCII names, swift-corelibs-foundation's `compare(_:)` is not transitive (seed 7
    /// has `"eé" < "é;.-" < "éZ_e"` but not `"eé" < "éZ_e"`), so no order equals every sort of
    /// every input order: what must hold is that each name is there once and no neighbour pair
    /// is out of `compare(_:)` order — a merge sort with that comparator gives exactly that.
    @Test(
        "with non-ASCII names beside ASCII ones, no neighbour pair is out of -[NSString compare:] order",
        arguments: UInt64(1)...40
    )
    func mixedNamesSortAsNSStringCompare(seed: UInt64) throws {
        let alphabet = (0x20...0x7E).map { Character(Unicode.Scalar($0)) } + ["é", "e\u{301}", "Z", "ß", "漢"]
        let names = Self.randomNames(seed: seed, alphabet: alphabet)
        let parameters = Dictionary(uniqueKeysWithValues: names.map { ($0 as AnyHashable, "v" as Any) })
        let sorted = try AFQueryStringFromParameters(parameters).split(separator: "&").map { pair in
            try #require(pair.hasSuffix("=v") ? String(pair.dropLast(2)).removingPercentEncoding : nil, "\(pair)")
        }
        #expect(Set(sorted) == names && sorted.count == names.count)
        for (before, after) in zip(sorted, sorted.dropFirst()) {
            let inOrder = NSString(string: after).compare(before) != .orderedAscending
            #expect(inOrder, "\(before.debugDescription) before \(after.debugDescription)")
        }
    }

    /// 300 distinct names of 1–6 characters from `alphabet`, the same for the same seed.
    private static func randomNames(seed: UInt64, alphabet: [Character]) -> Set<String> {
        var generator = SeededRandomNumberGenerator(seed: seed)
        var names = Set<String>()
        while names.count < 300 {
            names.insert(String((0..<Int.random(in: 1...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        return names
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
