/// The RFC 9112 message-framing rules the receiver enforces on a request head, on top of what
/// NIOHTTP1's decoder (llhttp) already refuses. A request that breaks one is answered with the
/// rejection's status and the connection is closed: whatever follows on it cannot be framed
/// safely (request smuggling).
///
/// - `Transfer-Encoding` and `Content-Length` together: 400 (RFC 9112 §6.1 allows a server to
///   go on after dropping `Content-Length`, but requires closing the connection; refusing is
///   the safe reading).
/// - `Transfer-Encoding` other than exactly `chunked` (one coding, once; `xchunked`,
///   `chunked, identity`, `gzip, chunked`, two `Transfer-Encoding` fields): 501.
/// - `Transfer-Encoding` on HTTP/1.0 (§6.1: a 1.0 message with it is faulty): 400.
/// - `Content-Length` that is not 1 to 19 decimal digits (a sign, hex, spaces, a list) or
///   that differs between two fields: 400.
enum FramingRules {
    /// Why a head is refused: the status to answer and a sentence for the body and the log.
    struct Rejection: Sendable, Equatable, Error {
        var status: Int
        var reason: String
    }

    /// The rejection for a request of HTTP/1.`minorVersion` with `headers`, or nil when its
    /// framing is sound.
    static func check(minorVersion: Int, headers: [(name: String, value: String)]) -> Rejection? {
        var transferEncodings: [String] = []
        var lengths: [String] = []
        for (name, value) in headers {
            if name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame {
                transferEncodings.append(value)
            } else if name.caseInsensitiveCompare("Content-Length") == .orderedSame {
                lengths.append(value)
            }
        }
        if !transferEncodings.isEmpty {
            if minorVersion == 0 {
                return Rejection(status: 400, reason: "Transfer-Encoding on an HTTP/1.0 request")
            }
            if !lengths.isEmpty {
                return Rejection(status: 400, reason: "Content-Length together with Transfer-Encoding")
            }
            let codings = transferEncodings.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { trimmed($0) }
            guard codings.count == 1, codings[0].lowercased() == "chunked" else {
                let shown = transferEncodings.joined(separator: ", ").prefix(100)
                return Rejection(status: 501, reason: "Transfer-Encoding \"\(shown)\" is not supported: only exactly \"chunked\"")
            }
            return nil
        }
        guard let first = lengths.first else { return nil }
        for length in lengths {
            let digits = trimmed(Substring(length))
            guard !digits.isEmpty, digits.utf8.count <= 19, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                Int64(digits) != nil
            else {
                return Rejection(status: 400, reason: "Content-Length \"\(length.prefix(40))\" is not a decimal number")
            }
            if trimmed(Substring(length)) != trimmed(Substring(first)) {
                return Rejection(status: 400, reason: "conflicting Content-Length fields")
            }
        }
        return nil
    }

    /// `text` without the spaces and tabs (optional whitespace) around it.
    private static func trimmed(_ text: Substring) -> String {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
