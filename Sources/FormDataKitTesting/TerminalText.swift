/// Text from the network made safe to print on a terminal: the one escaping that `formdata serve`
/// (what a client sent) and `formdata post` (what a server answered) both use.
public enum TerminalText {
    /// `text` with every control character — C0 (ESC, BEL, CR, LF, TAB, …), DEL, C1 (such as
    /// U+009B, the one-byte CSI) — and every line separator and bidirectional formatting
    /// character written as a visible `\u{1B}`-style escape, so that text a peer sent cannot
    /// move the cursor, recolour, retitle or otherwise drive the terminal it is printed on.
    /// With `keepingNewlines`, line feeds stay as they are (for multi-line text whose every
    /// line was made safe).
    /// - Parameters:
    ///   - text: text a peer sent.
    ///   - keepingNewlines: whether line feeds are kept.
    /// - Returns: the text, safe to print.
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
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
