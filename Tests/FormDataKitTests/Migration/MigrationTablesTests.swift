import Foundation
import Testing

/// The Migration tables name FormDataKit's API in their second column; every name there must be
/// declared in the sources (a renamed or removed member makes a row lie). Checked by name: the
/// leading identifier of each backticked span, against every `func`/`var`/`let`/`case`/type
/// declared in Sources/FormDataKit*.
@Suite("Migration tables name only API that exists")
struct MigrationTablesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Names that are not FormDataKit's to declare (Foundation, Swift, NIO), or not names at all.
    static let outside: Set<String> = [
        "Data", "FileManager", "URLSession", "String", "Sendable", "TLSConfiguration", "async", "final",
        "main", "values", "HTTP", "filename", "protocol", "try", "default", "httpShould", "httpAdditionalHeaders",
    ]

    /// Every name declared in the library sources.
    static func declaredNames() throws -> Set<String> {
        var names: Set<String> = ["init"]
        let sources = root.appendingPathComponent("Sources")
        let pattern = try NSRegularExpression(
            pattern: #"\b(?:func|var|let|case|class|struct|enum|typealias|protocol|actor)\s+([A-Za-z_][A-Za-z0-9_]*)"#)
        let walker = FileManager.default.enumerator(atPath: sources.path)
        while let path = walker?.nextObject() as? String {
            guard path.hasPrefix("FormDataKit"), path.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
            }
        }
        return names
    }

    /// The leading identifier of each backticked span in the second column of `document`'s tables.
    static func namesInSecondColumn(of document: String) throws -> [(name: String, span: String)] {
        let text = try String(contentsOf: root.appendingPathComponent("Migration/\(document)"), encoding: .utf8)
        let span = try NSRegularExpression(pattern: "`([^`]+)`")
        var found: [(String, String)] = []
        for line in text.split(separator: "\n") where line.hasPrefix("|") && !line.hasPrefix("|---") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard columns.count >= 4 else { continue }
            let column = columns[2]
            for match in span.matches(in: column, range: NSRange(column.startIndex..., in: column)) {
                guard let range = Range(match.range(at: 1), in: column) else { continue }
                let content = String(column[range])
                var rest = Substring(content)
                if rest.hasPrefix("try ") { rest = rest.dropFirst(4) }
                if rest.hasPrefix("await ") { rest = rest.dropFirst(6) }
                if let dot = rest.firstIndex(of: "."), rest[..<dot].first?.isUppercase == true,
                    rest[..<dot].allSatisfy({ $0.isLetter || $0.isNumber })
                {
                    if outside.contains(String(rest[..<dot])) { continue }  // Foundation's own member
                    rest = rest[rest.index(after: dot)...]  // Type.member: check the member
                }
                rest = rest.drop { $0 == "." }
                let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                if !name.isEmpty { found.append((name, content)) }
            }
        }
        return found
    }

    @Test("every name in the FormDataKit column is declared", arguments: ["ASIFormDataRequest.md", "AFNetworking.md"])
    func namesExist(document: String) throws {
        let declared = try Self.declaredNames()
        let named = try Self.namesInSecondColumn(of: document)
        #expect(named.count > 50, "the tables were not read")
        let missing = named.filter { !declared.contains($0.name) && !Self.outside.contains($0.name) }
        #expect(missing.isEmpty, "named in \(document) but not declared: \(missing.map(\.span))")
    }
}
