@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import Testing
@testable import FormDataKit

/// Multipart and URL-encoded output parsed by an independent implementation: Python's Werkzeug
/// (Tests/FormDataKitTests/Support/parse_form.py). Meaning is the contract here, not bytes.
@Suite("Independent parser (Werkzeug)")
struct IndependentParserTests {
    struct Parsed: Decodable {
        let fields: [[String]]
        let files: [[Value]]

        enum Value: Decodable, Equatable {
            case text(String), number(Int)
            init(from decoder: Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let n = try? c.decode(Int.self) { self = .number(n) } else { self = .text(try c.decode(String.self)) }
            }
        }
    }

    /// Name characters: ASCII letters, punctuation (no backslash, which Werkzeug unescapes but
    /// browsers do not escape), quotes, CR/LF, non-ASCII, boundary-like dashes.
    static let nameAlphabet: [String] = [
        "a", "b", "Z", "0", "_", "-", " ", "[", "]", ".", "\"", "\r", "\n", "é", "€", "日", "😀", "--", ";", "=",
    ]
    static let valueAlphabet: [String] = nameAlphabet + ["\r\n--0xKhTmLbOuNdArY-", "&", "%", "+", "\\", "\t", ""]

    struct Rng {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func text(_ alphabet: [String], maxLength: Int) -> String {
            (0..<next(maxLength + 1)).map { _ in alphabet[next(alphabet.count)] }.joined()
        }
    }

    /// What Werkzeug reports for a name or filename FormDataKit escaped: it keeps `%0D`/`%0A` but
    /// decodes `%22` back to `"` (shared/reference/peers-and-limits.md §5).
    static func asWerkzeugSees(_ name: String) -> String {
        HeaderParameterEscaping.escape(name).replacingOccurrences(of: "%22", with: "\"")
    }

    @Test("Random forms round-trip through Werkzeug", arguments: 1...8)
    func randomForms(seed: Int) async throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        var rng = Rng(state: UInt64(seed) * 7919)
        let request = FormDataRequest(url: anyURL)
        var expectedFields: [[String]] = []
        var expectedFiles: [[Parsed.Value]] = []
        for _ in 0..<(1 + rng.next(6)) {
            let name = "n" + rng.text(Self.nameAlphabet, maxLength: 6)
            let value = rng.text(Self.valueAlphabet, maxLength: 12)
            request.addPostValue(value, forKey: name)
            expectedFields.append([Self.asWerkzeugSees(name), Data(value.utf8).map { String(format: "%02x", $0) }.joined()])
        }
        for index in 0..<(1 + rng.next(3)) {
            let name = "f" + rng.text(Self.nameAlphabet, maxLength: 5)
            let fileName = "file\(index)" + rng.text(Self.nameAlphabet, maxLength: 5) + ".bin"
            let size = [0, 1, 100, 65_537, 300_000][rng.next(5)]
            let content = randomData(size, seed: UInt64(seed * 31 + index))
            if rng.next(2) == 0 {
                let path = try scratch.write("part\(index)", content)
                try request.addFile(path, withFileName: fileName, andContentType: "application/x-test", forKey: name)
            } else {
                request.addData(content, withFileName: fileName, andContentType: "application/x-test", forKey: name)
            }
            expectedFiles.append([
                .text(Self.asWerkzeugSees(name)), .text(Self.asWerkzeugSees(fileName)),
                .text("application/x-test"), .text(try await sha256Hex(content)), .number(size),
            ])
        }
        try request.buildPostBody()
        let bodyPath = try #require(request.postBodyFilePath)
        let output = try await runPython("parse_form.py", [bodyPath, request.requestHeaders["Content-Type"]!])
        let parsed = try JSONDecoder().decode(Parsed.self, from: output)
        #expect(parsed.fields.sorted { $0.lexicographicallyPrecedes($1) } == expectedFields.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(parsed.files.count == expectedFiles.count)
        for file in expectedFiles { #expect(parsed.files.contains(file)) }
    }

    @Test("A URL-encoded body parses to the same values")
    func urlEncodedRoundTrip() async throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let request = FormDataRequest(url: anyURL)
        let pairs = [("plain", "value"), ("sp ace", "a b+c"), ("amp&", "=&%"), ("uni€", "日本 😀"), ("crlf", "a\r\nb"), ("empty", "")]
        for (k, v) in pairs { request.addPostValue(v, forKey: k) }
        try request.buildPostBody()
        let path = try scratch.write("body", request.postBody!)
        let output = try await runPython("parse_form.py", [path, request.requestHeaders["Content-Type"]!])
        let parsed = try JSONDecoder().decode(Parsed.self, from: output)
        #expect(parsed.fields == pairs.map { [$0.0, Data($0.1.utf8).map { String(format: "%02x", $0) }.joined()] })
    }
}

/// SHA-256 of `data` as lowercase hex, computed by the system's `sha256sum` (waited for on GCD
/// threads by ``ChildProcess``, never on the Swift concurrency pool).
func sha256Hex(_ data: Data) async throws -> String {
    let path = NSTemporaryDirectory() + "fdk-sha256-\(UUID().uuidString)"
    try data.write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = try await ChildProcess.run("/usr/bin/env", ["sha256sum", path])
    return String(String(decoding: result.stdout, as: UTF8.self).prefix(64))
}
