import Foundation

extension LoopbackHTTPServer {
    /// One request's head, as NIOHTTP1's decoder read it off the connection.
    package struct Request: Sendable {
        /// The method, as sent.
        var method: String
        /// The request target, as sent (percent-encoded).
        var target: String
        /// `HTTP/1.1` or `HTTP/1.0`.
        var version: String
        /// The header fields in the order they came, names as sent.
        var headers: [(name: String, value: String)]

        /// The path part of the target, still percent-encoded.
        var encodedPath: String { String(target.prefix { $0 != "?" }) }
        /// The query part of the target (after `?`), still percent-encoded; empty when absent.
        var encodedQuery: String {
            guard let mark = target.firstIndex(of: "?") else { return "" }
            return String(target[target.index(after: mark)...])
        }
        /// The path, percent-decoded (the encoded one when it does not decode).
        var path: String { encodedPath.removingPercentEncoding ?? encodedPath }
        /// The query's `name=value` pairs, percent-decoded.
        var query: [(name: String, value: String)] {
            encodedQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in String(text).removingPercentEncoding ?? String(text) }
                return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
            }
        }

        /// The first value of header `name` (compared without regard to case).
        package func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        /// Whether the body came with `Transfer-Encoding: chunked` (the only transfer coding the
        /// server lets through: see ``FramingRules``).
        var isChunked: Bool { header("Transfer-Encoding") != nil }
    }

    /// What the handler answers.
    package struct Response: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: Data

        package init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// A `text/plain` answer (the server's own refusals).
        static func text(_ status: Int, _ message: String) -> Response {
            Response(
                status: status, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
                body: Data((message + "\n").utf8))
        }
    }

    /// Answers one request on a thread of its own: reads its body from the reader (whatever it
    /// leaves unread is read and dropped afterwards), returns the response. Throwing closes the
    /// connection unanswered.
    package typealias Handler = @Sendable (Request, BodyReader) throws -> Response

    /// Where the server reports what an operator should know (accept errors and back-off,
    /// refused connections, dropped clients): one line each.
    package typealias Log = @Sendable (String) -> Void
}
