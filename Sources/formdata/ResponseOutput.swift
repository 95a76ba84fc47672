import FormDataKit
import FormDataKitTesting
import Foundation

/// What `formdata post` (and `formdata demo`) print of a response. The status line, header names
/// and values, and error messages (which can quote a server's realm or a redirect's `Location`)
/// are text the server chose: every control character in them is escaped as `formdata serve`
/// escapes what a client sent (``TerminalText/escaped(_:keepingNewlines:)``), so a server cannot
/// recolour, retitle or clear the terminal. The body is data: written as it came when standard
/// output is a file or a pipe (`> file` keeps it byte for byte), escaped only when it is a terminal.
enum ResponseOutput {
    /// The status line (in the version the answer came in) and the headers sorted by name, one per
    /// line, escaped, ending in a blank line.
    static func head(_ response: FormDataResponse) -> String {
        var status = response.statusMessage
        // The version the answer came in, as curl prints it (`HTTP/2 200`).
        if let version = response.httpVersion, status.hasPrefix("HTTP/1.1") { status = version.rawValue + status.dropFirst(8) }
        var head = TerminalText.escaped(status) + "\n"
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
            head += TerminalText.escaped(name) + ": " + TerminalText.escaped(value) + "\n"
        }
        return head + "\n"
    }

    /// The body as written to standard output: unchanged unless `toTerminal`; then decoded as
    /// UTF-8 (an invalid byte shows as U+FFFD) with every control character but the line feed
    /// escaped, and a final line feed added when it lacks one.
    static func body(_ body: Data, toTerminal: Bool) -> Data {
        guard toTerminal else { return body }
        var text = TerminalText.escaped(String(decoding: body, as: UTF8.self), keepingNewlines: true)
        if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
        return Data(text.utf8)
    }

    /// `formdata: <error>` with the error's description escaped, for standard error.
    static func failure(_ error: any Error) -> String {
        "formdata: " + TerminalText.escaped(String(describing: error)) + "\n"
    }
}
