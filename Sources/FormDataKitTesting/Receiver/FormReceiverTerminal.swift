import FormDataKit
import Foundation

extension FormReceiver {
    // MARK: - Console output

    /// `text` escaped for a terminal: ``TerminalText/escaped(_:keepingNewlines:)`` (every control
    /// character, line separator and bidirectional formatting character written as `\u{1B}`).
    /// - Parameters:
    ///   - text: text a client sent.
    ///   - keepingNewlines: whether line feeds are kept.
    /// - Returns: the text, safe to print.
    public static func escapedForTerminal(_ text: String, keepingNewlines: Bool = false) -> String {
        TerminalText.escaped(text, keepingNewlines: keepingNewlines)
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
    static let secretHeaderNames: Set<String> = ["authorization", "cookie", "proxy-authorization"]

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
