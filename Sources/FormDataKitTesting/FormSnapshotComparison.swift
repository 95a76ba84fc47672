import FormDataKit
import Foundation

/// What two ``FormSnapshot``s may differ in and still be equivalent.
///
/// ``exact`` compares everything a snapshot keeps; ``default`` tolerates only the boundary (two
/// builds never share a random one).
public struct FormSnapshotTolerance: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int
    /// A tolerance set from its bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The multipart boundary may differ.
    public static let boundary = FormSnapshotTolerance(rawValue: 1 << 0)
    /// Parts may be reordered, except among parts that share a name (`files[]` keeps its order):
    /// ASIFormDataRequest sends values before files, AFNetworking sorts parameters, curl keeps
    /// command-line order.
    public static let partOrder = FormSnapshotTolerance(rawValue: 1 << 1)
    /// The `charset` parameter of `Content-Type` (and of part content types) may differ or be
    /// missing: ASIFormDataRequest sends `charset=utf-8` on multipart bodies, browsers, curl and
    /// AFNetworking do not.
    public static let charsetParameter = FormSnapshotTolerance(rawValue: 1 << 2)
    /// Header names (and media type and parameter names) compare case-insensitively, as HTTP
    /// defines them: Linux `URLRequest` capitalizes header names (`X-API-Key` → `X-Api-Key`).
    public static let headerCase = FormSnapshotTolerance(rawValue: 1 << 3)
    /// The URL's scheme, host and port may differ; its path and query still compare. Two
    /// captures from receivers on different ports (every ``FormReceiver`` started on port 0
    /// gets its own), or from a staging and a production host, are then equivalent.
    public static let host = FormSnapshotTolerance(rawValue: 1 << 4)

    /// Nothing may differ.
    public static let exact: FormSnapshotTolerance = []
    /// Only the boundary may differ.
    public static let `default`: FormSnapshotTolerance = [.boundary]
    /// Every named tolerance.
    public static let all: FormSnapshotTolerance = [.boundary, .partOrder, .charsetParameter, .headerCase, .host]

    /// The tolerance called `name` on the command line: `boundary`, `part-order`, `charset`,
    /// `header-case`, `host` (also `url-host`, `origin`), `all`, `none`.
    /// - Parameter name: the name, in any case; another name gives nil.
    public init?(name: String) {
        switch name.lowercased() {
        case "boundary": self = .boundary
        case "part-order", "order": self = .partOrder
        case "charset", "charset-parameter": self = .charsetParameter
        case "header-case", "case": self = .headerCase
        case "host", "url-host", "origin": self = .host
        case "all": self = .all
        case "none", "exact": self = .exact
        default: return nil
        }
    }
}

/// One way two snapshots differ: where, and the two sides.
public struct FormSnapshotDifference: Sendable, Equatable, CustomStringConvertible {
    /// What differs, e.g. `method`, `header Authorization`, `part 2 "photo" content`.
    public var location: String
    /// The left side's value (`(missing)` when it has none).
    public var lhs: String
    /// The right side's value.
    public var rhs: String

    /// A difference.
    /// - Parameters:
    ///   - location: where the snapshots differ (`header content-type`, `part 2 "photo" content`).
    ///   - lhs: what the left snapshot has there, as shown in reports.
    ///   - rhs: what the right snapshot has there.
    public init(location: String, lhs: String, rhs: String) {
        self.location = location
        self.lhs = lhs
        self.rhs = rhs
    }

    /// `location: lhs ≠ rhs`.
    public var description: String { "\(location): \(lhs) ≠ \(rhs)" }
}

extension FormSnapshot {
    /// Every difference between this snapshot (left) and `other` (right), field by field, in a
    /// stable order; empty when they are equivalent under `tolerance`.
    /// - Parameters:
    ///   - other: the right-hand snapshot.
    ///   - tolerance: the differences allowed (``FormSnapshotTolerance/default``: the boundary).
    /// - Returns: the differences, in a stable order.
    public func differences(from other: FormSnapshot, tolerating tolerance: FormSnapshotTolerance = .default) -> [FormSnapshotDifference] {
        var out: [FormSnapshotDifference] = []
        func note(_ location: String, _ lhs: String, _ rhs: String) {
            out.append(FormSnapshotDifference(location: location, lhs: lhs, rhs: rhs))
        }
        let caseless = tolerance.contains(.headerCase)
        func same(_ a: String?, _ b: String?, ignoringCase: Bool) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return ignoringCase ? a.caseInsensitiveCompare(b) == .orderedSame : a == b
        }
        func show(_ value: String?) -> String { value.map { $0.quotedForTerminal } ?? "(missing)" }

        if method != other.method { note("method", show(method), show(other.method)) }
        if tolerance.contains(.host) {
            if Self.pathAndQuery(url) != Self.pathAndQuery(other.url) { note("url", show(url), show(other.url)) }
        } else if url != other.url {
            note("url", show(url), show(other.url))
        }

        // Headers: by lowercase name.
        let leftHeaders = Self.grouped(headers)
        let rightHeaders = Self.grouped(other.headers)
        for key in Set(leftHeaders.keys).union(rightHeaders.keys).sorted() {
            let left = leftHeaders[key]
            let right = rightHeaders[key]
            let label = "header \(left?.name ?? right?.name ?? key)"
            if left?.value != right?.value {
                note(label, show(left?.value), show(right?.value))
            } else if !caseless, let left, let right, left.name != right.name {
                note("\(label) name case", show(left.name), show(right.name))
            }
        }

        // Content type.
        if !same(mediaType, other.mediaType, ignoringCase: caseless) {
            note("content type", show(mediaType), show(other.mediaType))
        }
        if !tolerance.contains(.boundary), boundary != other.boundary {
            note("boundary", show(boundary), show(other.boundary))
        }
        let ignoreCharset = tolerance.contains(.charsetParameter)
        let leftParameters = Self.grouped(contentTypeParameters).filter { !(ignoreCharset && $0.key == "charset") }
        let rightParameters = Self.grouped(other.contentTypeParameters).filter { !(ignoreCharset && $0.key == "charset") }
        for key in Set(leftParameters.keys).union(rightParameters.keys).sorted() {
            let left = leftParameters[key]
            let right = rightParameters[key]
            let ignoreValueCase = key == "charset" && caseless
            if !same(left?.value, right?.value, ignoringCase: ignoreValueCase) {
                note("content type parameter \(key)", show(left?.value), show(right?.value))
            } else if !caseless, let left, let right, left.name != right.name {
                note("content type parameter \(key) name case", show(left.name), show(right.name))
            }
        }

        // Body.
        if bodyKind != other.bodyKind { note("body", bodyKind.rawValue, other.bodyKind.rawValue) }
        if bodyKind == .other || other.bodyKind == .other {
            if !Self.sameRawBody(rawBody, other.rawBody, json: Self.isJSON(mediaType) && Self.isJSON(other.mediaType)) {
                note("body bytes", Self.summary(rawBody), Self.summary(other.rawBody))
            }
        }
        if tolerance.contains(.partOrder) {
            let leftByName = Dictionary(grouping: parts.enumerated(), by: { $0.element.name })
            let rightByName = Dictionary(grouping: other.parts.enumerated(), by: { $0.element.name })
            for name in Set(leftByName.keys).union(rightByName.keys).sorted() {
                let left = leftByName[name] ?? []
                let right = rightByName[name] ?? []
                for index in 0..<max(left.count, right.count) {
                    let label = "part \(name.quotedForTerminal)" + (max(left.count, right.count) > 1 ? " #\(index + 1)" : "")
                    comparePart(
                        index < left.count ? left[index].element : nil, index < right.count ? right[index].element : nil,
                        label: label, tolerance: tolerance, note: note)
                }
            }
        } else {
            for index in 0..<max(parts.count, other.parts.count) {
                let left = index < parts.count ? parts[index] : nil
                let right = index < other.parts.count ? other.parts[index] : nil
                let names = left?.name == right?.name || right == nil ? show(left?.name) : "\(show(left?.name))/\(show(right?.name))"
                comparePart(left, right, label: "part \(index + 1) \(names)", tolerance: tolerance, note: note)
            }
        }
        return out
    }

    private func comparePart(
        _ left: Part?, _ right: Part?, label: String, tolerance: FormSnapshotTolerance,
        note: (String, String, String) -> Void
    ) {
        guard let left, let right else {
            note(label, left.map(Self.describe) ?? "(missing)", right.map(Self.describe) ?? "(missing)")
            return
        }
        func show(_ value: String?) -> String { value.map { $0.quotedForTerminal } ?? "(none)" }
        if left.name != right.name {
            // A different part altogether: one line with both.
            note(label, Self.describe(left), Self.describe(right))
            return
        }
        if left.fileName != right.fileName { note("\(label) filename", show(left.fileName), show(right.fileName)) }
        let leftType = Self.contentType(left.contentType, tolerance: tolerance)
        let rightType = Self.contentType(right.contentType, tolerance: tolerance)
        if leftType != rightType { note("\(label) content type", show(left.contentType), show(right.contentType)) }
        let leftOther = left.otherHeaders.map {
            tolerance.contains(.headerCase) ? "\($0.name.lowercased()): \($0.value)" : "\($0.name): \($0.value)"
        }
        let rightOther = right.otherHeaders.map {
            tolerance.contains(.headerCase) ? "\($0.name.lowercased()): \($0.value)" : "\($0.name): \($0.value)"
        }
        if leftOther != rightOther {
            note(
                "\(label) headers", leftOther.joined(separator: "; ").quotedForTerminal,
                rightOther.joined(separator: "; ").quotedForTerminal)
        }
        if left.sha256 != right.sha256 || left.size != right.size {
            var rhs = Self.summary(right)
            if let a = left.content, let b = right.content {
                let firstDifference = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
                rhs += ", first difference at byte \(firstDifference)"
            }
            note("\(label) content", Self.summary(left), rhs)
        }
    }

    /// Whether `other` is equivalent to this snapshot under `tolerance`.
    /// - Parameters:
    ///   - other: the other snapshot.
    ///   - tolerance: the differences allowed (``FormSnapshotTolerance/default``: the boundary).
    /// - Returns: whether there is no difference beyond `tolerance`.
    public func matches(_ other: FormSnapshot, tolerating tolerance: FormSnapshotTolerance = .default) -> Bool {
        differences(from: other, tolerating: tolerance).isEmpty
    }

    /// A readable report of the differences (one per line, each side labelled), or
    /// `equivalent` when there are none.
    /// - Parameters:
    ///   - other: the right-hand snapshot.
    ///   - tolerance: the differences allowed (``FormSnapshotTolerance/default``: the boundary).
    ///   - labels: the names of the two sides in the report (`A`, `B`).
    /// - Returns: the report, or `equivalent`.
    public func diffReport(
        against other: FormSnapshot, tolerating tolerance: FormSnapshotTolerance = .default,
        labels: (String, String) = ("A", "B")
    ) -> String {
        let found = differences(from: other, tolerating: tolerance)
        if found.isEmpty { return "equivalent" }
        var lines = ["\(found.count) difference\(found.count == 1 ? "" : "s") (\(labels.0) ≠ \(labels.1)):"]
        for difference in found { lines.append("  \(difference.location): \(labels.0) \(difference.lhs) ≠ \(labels.1) \(difference.rhs)") }
        // Values are quoted and escaped already; a header's name is as the client sent it.
        return lines.map { TerminalText.escaped($0) }.joined(separator: "\n")
    }

    /// The snapshot, one line per item: method and URL, headers, content type, parts.
    public var description: String {
        var lines = ["\(method) \(url)"]
        for header in headers { lines.append("  \(header.name): \(header.value)") }
        if let mediaType {
            var type = mediaType
            for parameter in contentTypeParameters { type += "; \(parameter.name)=\(parameter.value)" }
            if let boundary { type += "; boundary=\(boundary)" }
            lines.append("  Content-Type: \(type)")
        }
        switch bodyKind {
        case .none: lines.append("  (no body)")
        case .other: lines.append("  body: \(Self.summary(rawBody))")
        case .urlEncoded, .multipart:
            for (index, part) in parts.enumerated() { lines.append("  part \(index + 1): \(Self.describe(part))") }
        }
        // The URL and the headers are as the client sent them: escaped, as the values are.
        return lines.map { TerminalText.escaped($0) }.joined(separator: "\n")
    }

    // MARK: - Helpers

    /// The path (`/` when empty) and query of `url`, without scheme, host, port and fragment;
    /// `url` itself when it is not absolute.
    static func pathAndQuery(_ url: String) -> String {
        guard let components = URLComponents(string: url), components.host != nil else { return url }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return path + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
    }

    static func grouped(_ headers: [ReceivedHeader]) -> [String: ReceivedHeader] {
        var out: [String: ReceivedHeader] = [:]
        for header in headers {
            let key = header.name.lowercased()
            if let existing = out[key] {
                out[key] = ReceivedHeader(name: existing.name, value: existing.value + ", " + header.value)
            } else {
                out[key] = header
            }
        }
        return out
    }

    static func describe(_ part: Part) -> String {
        var text = part.name.quotedForTerminal
        if let fileName = part.fileName { text += " file \(fileName.quotedForTerminal)" }
        if let type = part.contentType { text += " (\(type))" }
        if part.isFile || part.content == nil || part.size > 80 {
            text += " \(summary(part))"
        } else {
            text += " = \((part.text ?? "").quotedForTerminal)"
        }
        return text
    }

    static func summary(_ part: Part) -> String {
        if !part.isFile, part.size <= 80, let text = part.text { return text.quotedForTerminal }
        return "\(part.size) bytes, sha256 \(part.sha256.prefix(16))…"
    }

    static func summary(_ data: Data?) -> String {
        guard let data else { return "(none)" }
        if data.count <= 200, let text = String(data: data, encoding: .utf8) { return text.quotedForTerminal }
        return "\(data.count) bytes, sha256 \(SHA256.hex(data).prefix(16))…"
    }

    static func contentType(_ value: String?, tolerance: FormSnapshotTolerance) -> String? {
        guard var value else { return nil }
        if tolerance.contains(.charsetParameter) {
            value = value.split(separator: ";").filter {
                !$0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("charset=")
            }.joined(separator: ";")
        }
        value = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; ")
        return tolerance.contains(.headerCase) ? value.lowercased() : value
    }

    static func isJSON(_ mediaType: String?) -> Bool {
        guard let type = mediaType?.lowercased() else { return false }
        return type == "application/json" || type.hasSuffix("+json") || type == "text/json"
    }

    /// Equal bytes, or — for two JSON bodies — equal JSON values (object key order does not matter).
    static func sameRawBody(_ a: Data?, _ b: Data?, json: Bool) -> Bool {
        if a == b { return true }
        guard json, let a, let b,
            let left = try? JSONSerialization.jsonObject(with: a, options: [.fragmentsAllowed]),
            let right = try? JSONSerialization.jsonObject(with: b, options: [.fragmentsAllowed]),
            let canonicalLeft = try? JSONSerialization.data(withJSONObject: left, options: [.sortedKeys, .fragmentsAllowed]),
            let canonicalRight = try? JSONSerialization.data(withJSONObject: right, options: [.sortedKeys, .fragmentsAllowed])
        else { return false }
        return canonicalLeft == canonicalRight
    }
}

extension String {
    /// The string quoted and escaped as Swift writes a literal (`"a\u{1B}"`), with C1 controls
    /// (such as U+009B, the one-byte CSI), line separators and bidirectional formatting
    /// characters escaped too (``TerminalText/escaped(_:keepingNewlines:)``): a value a client sent
    /// cannot drive the terminal a difference report is printed on.
    var quotedForTerminal: String { TerminalText.escaped(debugDescription) }
}
