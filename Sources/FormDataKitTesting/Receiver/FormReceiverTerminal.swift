import FormDataKit
import Foundation

extension FormReceiver {
    // MARK: - Console output

    /// `text` with every control character — C0 (ESC, BEL, CR, LF, TAB, …), DEL, C1 (such as
    /// U+009B, the one-byte CSI) — and every line separator and bidirectional formatting
    /// character written as a visible `\u{1B}`-style escape, so that text a client sent cannot
    /// move the cursor, recolour, retitle or otherwise drive the terminal it is printed on.
    /// With `keepingNewlines`, line feeds stay as they are (for multi-line text whose every
    /// line was made safe).
    /// - Parameters:
    ///   - text: text a client sent.
    ///   - keepingNewlines: whether line feeds are kept.
    /// - Returns: the text, safe to print.
    public static func escapedForTerminal(_ text: String, keepingNewlines: Bool = false) -> String {
        // Most text needs nothing: returned as it is, without rebuilding it scalar by scalar.
        if isPrintableASCII(text, keepingNewlines: keepingNewlines) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if keepingNewlines && scalar == "\n" {
                out.append(scalar)
            } else if needsEscape(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether `text` is printable ASCII only (and line feeds, when kept): nothing to escape.
    private static func isPrintableASCII(_ text: String, keepingNewlines: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte > 0x7E {
                guard keepingNewlines && byte == 0x0A else { return false }
            }
            return true
        }
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0, DEL, C1
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidirectional formatting
        case 0x2028, 0x2029: return true  // line and paragraph separators
        default: return false
        }
    }
}

extension ReceivedRequest {
    /// ``summary`` made safe to print on a terminal (what `formdata serve` prints): every
    /// control character the client sent — in the method, path, header names and values, field
    /// and file names, content types, field values, parse errors — is escaped as
    /// ``FormReceiver/escapedForTerminal(_:keepingNewlines:)`` does; the only line breaks are
    /// those between the summary's lines.
    public var terminalSummary: String {
        func safe(_ text: String) -> String { FormReceiver.escapedForTerminal(text) }
        var copy = self
        copy.method = safe(method)
        copy.path = safe(path)
        copy.headers = headers.map { ReceivedHeader(name: safe($0.name), value: safe($0.value)) }
        if var form = copy.form {
            // Names, file names and values are printed with `debugDescription`, which escapes
            // C0 controls itself; the last pass below catches the rest.
            for index in form.files.indices { form.files[index].contentType = form.files[index].contentType.map(safe) }
            copy.form = form
        }
        copy.parseError = parseError.map { FormParseError(offset: $0.offset, reason: safe($0.reason)) }
        return FormReceiver.escapedForTerminal(copy.summary, keepingNewlines: true)
    }

    /// The header fields whose values `formdata serve` does not print unless `--show-secrets`.
    package static let secretHeaderNames: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// This request with the values of its `Authorization`, `Cookie` and `Proxy-Authorization`
    /// fields replaced by `[redacted, N bytes]` (what `formdata serve` prints by default).
    package func redactingSecrets() -> ReceivedRequest {
        var copy = self
        copy.headers = headers.map { header in
            guard Self.secretHeaderNames.contains(header.name.lowercased()) else { return header }
            return ReceivedHeader(name: header.name, value: "[redacted, \(header.value.utf8.count) bytes]")
        }
        return copy
    }
}
