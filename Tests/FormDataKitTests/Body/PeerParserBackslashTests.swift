@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import Testing
@testable import FormDataKit

/// How five parsers FormDataKit did not write — Werkzeug, python-multipart, Python's `email`,
/// Go's mime/multipart and PHP (Tests/PeerParsers/peer_parsers.py) — read a part name or filename
/// with a backslash, for each way it could be written: raw (browsers, ASIHTTPRequest,
/// AFNetworking), `%5C` (as browsers write `"` as `%22`) and `\\` (a quoted-pair). The measured
/// table in Migration/ASIFormDataRequest.md is this test's expectations; a parser that changes
/// fails it. It is why FormDataKit refuses a trailing backslash (no way of writing it is read
/// back as `\` by all five) and sends every other backslash raw (every parser keeps the part).
@Suite("Backslashes in part names, read by five independent parsers")
struct PeerParserBackslashTests {
    static let parsers = ["werkzeug", "python-multipart", "email", "go", "php"]
    static let boundary = "XyZzY-boundary"

    /// A body of one part with this `Content-Disposition` parameter text, then a text field `after`.
    static func body(_ parameters: String) -> Data {
        let fileHeaders = parameters.contains("filename=") ? "Content-Type: text/plain\r\n" : ""
        return Data(
            ("--\(boundary)\r\nContent-Disposition: form-data; \(parameters)\r\n\(fileHeaders)\r\nhello"
                + "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"after\"\r\n\r\nz\r\n--\(boundary)--\r\n").utf8)
    }

    /// What FormDataKit sends for names with backslashes it accepts (not at the end).
    static func sentBody() throws -> Data {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = boundary
        request.addData(Data("hello".utf8), withFileName: "a\\b.txt", andContentType: "text/plain", forKey: "a\\b")
        request.addPostValue("z", forKey: "after")
        return try TrailingBackslashTests.body(request)
    }

    /// Each case: the parts every parser saw, `text:<name>` then `file:<name>:<filename>`.
    static let expected: [String: [String: [String]]] = [
        // A name ending in `\`, written raw: the `\"` escapes the closing quote; nobody sees a file.
        #"raw name="a\"; filename="ok.txt""#: [
            "werkzeug": [#"text:a"; filename="#, "text:after"],
            "python-multipart": [#"text:a"; filename="ok.txt"#, "text:after"],
            "email": [#"text:a"; filename="#, "text:after"],
            "go": ["text:", "text:after"],
            "php": [#"text:a";_filename="#, "text:after"],
        ],
        // As %5C: every parser sees the file, under the name a%5C (none decodes it).
        #"pct name="a%5C"; filename="ok.txt""#: Dictionary(
            uniqueKeysWithValues: parsers.map { ($0, ["text:after", "file:a%5C:ok.txt"]) }),
        // As a quoted-pair: Werkzeug and Go read a\ back; python-multipart, email and PHP do not.
        #"pair name="a\\"; filename="ok.txt""#: [
            "werkzeug": ["text:after", #"file:a\:ok.txt"#],
            "python-multipart": [#"text:a"; filename="ok.txt"#, "text:after"],
            "email": [#"text:a"; filename="ok.txt"#, "text:after"],
            "go": ["text:after", #"file:a\:ok.txt"#],
            "php": [#"text:a\"#, "text:after"],
        ],
        // A filename ending in `\`, raw: Werkzeug and Go lose the file; email and PHP read ok".
        #"raw name="file"; filename="ok\""#: [
            "werkzeug": ["text:file", "text:after"],
            "python-multipart": ["text:after", #"file:file:ok\"#],
            "email": ["text:after", #"file:file:ok""#],
            "go": ["text:", "text:after"],
            "php": ["text:after", #"file:file:ok""#],
        ],
        #"pct name="file"; filename="ok%5C""#: Dictionary(
            uniqueKeysWithValues: parsers.map { ($0, ["text:after", "file:file:ok%5C"]) }),
        #"pair name="file"; filename="ok\\""#: [
            "werkzeug": ["text:after", #"file:file:ok\"#],
            "python-multipart": ["text:after", #"file:file:ok\"#],
            "email": ["text:after", #"file:file:ok\"#],
            "go": ["text:after", #"file:file:ok\"#],
            "php": ["text:after", "file:file:"],
        ],
        // What FormDataKit sends for a\b (a backslash not at the end): every parser keeps the part;
        // email drops a lone backslash, PHP keeps only what follows the last one in a filename.
        "sent a\\b": [
            "werkzeug": ["text:after", #"file:a\b:a\b.txt"#],
            "python-multipart": ["text:after", #"file:a\b:a\b.txt"#],
            "email": ["text:after", "file:ab:ab.txt"],
            "go": ["text:after", #"file:a\b:a\b.txt"#],
            "php": ["text:after", #"file:a\b:b.txt"#],
        ],
    ]

    struct Reading: Decodable {
        var fields: [[String?]]?
        var files: [[Value]]?
        var error: String?

        /// A JSON string, number or null (decoded as form_server.py's answers are).
        typealias Value = WerkzeugResult.FileValue

        /// `text:<name>` for each field, then `file:<name>:<filename>` for each file.
        var parts: [String] {
            if let error { return ["error: \(error)"] }
            return (fields ?? []).map { "text:" + ($0.first.flatMap { $0 } ?? "") }
                + (files ?? []).map { "file:" + Self.text($0[0]) + ":" + Self.text($0[1]) }
        }

        private static func text(_ value: Value) -> String {
            switch value {
            case .text(let text): return text
            case .number(let number): return String(number)
            case .null: return ""
            }
        }
    }

    struct ParserOutput: Decodable {
        var missing: String?
        var results: [String: Reading]?
    }

    /// Every case through every parser, once for the whole suite (a Go build and a PHP server).
    static let measured = Task { () async throws -> [String: ParserOutput] in
        var cases: [[String: String]] = []
        for id in expected.keys where !id.hasPrefix("sent") {
            cases.append(["id": id, "body_hex": hex(body(String(id.split(separator: " ", maxSplits: 1)[1])))])
        }
        cases.append(["id": "sent a\\b", "body_hex": hex(try sentBody())])
        let input = try JSONSerialization.data(withJSONObject: [
            "cases": cases.map { $0.merging(["content_type": "multipart/form-data; boundary=\(boundary)"]) { old, _ in old } }
        ])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../PeerParsers/peer_parsers.py").standardized.path
        let inputPath = NSTemporaryDirectory() + "fdk-peer-cases-\(UUID().uuidString).json"
        try input.write(to: URL(fileURLWithPath: inputPath))
        defer { try? FileManager.default.removeItem(atPath: inputPath) }
        let result = try await ChildProcess.run("/bin/sh", ["-c", "exec python3 \"$0\" < \"$1\"", script, inputPath])
        guard result.status == 0, !result.signalled else {
            throw PythonFailure(message: String(decoding: result.stderr, as: UTF8.self))
        }
        return try JSONDecoder().decode([String: ParserOutput].self, from: result.stdout)
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test("each parser reads each way of writing a backslash as measured", arguments: parsers)
    func parserReadsAsMeasured(parser: String) async throws {
        let output = try #require(try await Self.measured.value[parser], "peer_parsers.py did not report \(parser)")
        if let missing = output.missing {
            if RealServers.required { Issue.record("\(parser) is needed (FORMDATAKIT_REQUIRE_REAL_SERVERS=1): \(missing)") }
            try Test.cancel("skipped: \(missing)")
        }
        let results = try #require(output.results)
        for (id, byParser) in Self.expected.sorted(by: { $0.key < $1.key }) {
            #expect(results[id]?.parts == byParser[parser], "\(parser), \(id)")
        }
    }
}
