import Foundation

/// One HTTP/1.1 request as bytes: request line, header fields, body — the format of the files
/// `formdata serve --record` writes and `formdata diff` reads (what `nc -l` or a proxy would
/// capture).
///
/// Reading is strict: the head must end with an empty line; with `Content-Length` the body must
/// have exactly that many bytes; with `Transfer-Encoding: chunked` the chunks must be well formed
/// (the decoded body is kept); without either, the rest of the file is the body. Errors name the
/// byte offset in the capture.
public struct RawHTTPRequest: Sendable, Equatable {
    /// The method, e.g. `POST`.
    public var method: String
    /// The request target as sent: `/upload?x=1` (origin form) or an absolute URL.
    public var target: String
    /// The protocol version, e.g. `HTTP/1.1`.
    public var version: String
    /// The header fields, in order, names as sent.
    public var headers: [ReceivedHeader]
    /// The body (chunked transfer coding removed).
    public var body: Data

    /// A request made of its pieces.
    /// - Parameters:
    ///   - method: the request method.
    ///   - target: the request target (a path, or an absolute URL for a proxy).
    ///   - version: the HTTP version (`HTTP/1.1`).
    ///   - headers: the header fields, in order.
    ///   - body: the body bytes (not chunk-framed).
    public init(method: String, target: String, version: String = "HTTP/1.1", headers: [ReceivedHeader], body: Data) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (case-insensitive; repeated fields joined with `, `).
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value, or nil when there is no such header.
    public func header(_ name: String) -> String? {
        let values = headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The absolute URL: the target itself when absolute, else `http://<Host><target>`.
    public var url: String {
        if target.lowercased().hasPrefix("http://") || target.lowercased().hasPrefix("https://") { return target }
        return "http://\(header("Host") ?? "localhost")\(target)"
    }

    /// Whether `data` looks like a raw HTTP request (`TOKEN SP target SP HTTP/x` first line).
    /// - Parameter data: the file's bytes.
    /// - Returns: whether its first line is a request line.
    public static func looksLikeRequest(_ data: Data) -> Bool {
        guard let lineEnd = data.firstIndex(of: 10) else { return false }
        let line = String(decoding: data[data.startIndex..<lineEnd], as: UTF8.self)
        let pieces = line.trimmingCharacters(in: CharacterSet(charactersIn: "\r")).split(separator: " ")
        return pieces.count == 3 && pieces[2].hasPrefix("HTTP/") && pieces[0].allSatisfy { $0.isLetter || $0 == "-" }
    }

    /// Parses a capture.
    /// - Throws: ``FormParseError`` with the offset in `data` where it stopped.
    /// - Parameter data: the capture's bytes: head, then the body (chunked or with its length).
    public init(parsing data: Data) throws(FormParseError) {
        let bytes = [UInt8](data)
        guard let headEnd = FormBodyParser.find(Array("\r\n\r\n".utf8), in: bytes, from: 0) else {
            throw FormParseError(offset: bytes.count, reason: "The request head does not end with an empty line (CRLF CRLF)")
        }
        var lines: [(offset: Int, text: String)] = []
        var start = 0
        while start < headEnd {
            let end = FormBodyParser.find([13, 10], in: bytes, from: start) ?? headEnd
            lines.append((start, String(decoding: bytes[start..<min(end, headEnd)], as: UTF8.self)))
            start = end + 2
        }
        guard let requestLine = lines.first else {
            throw FormParseError(offset: 0, reason: "No request line")
        }
        let pieces = requestLine.text.split(separator: " ", omittingEmptySubsequences: false)
        guard pieces.count == 3, !pieces[0].isEmpty, !pieces[1].isEmpty, pieces[2].hasPrefix("HTTP/") else {
            throw FormParseError(offset: 0, reason: "Bad request line: \(requestLine.text.debugDescription)")
        }
        method = String(pieces[0])
        target = String(pieces[1])
        version = String(pieces[2])
        headers = []
        for line in lines.dropFirst() {
            guard let colon = line.text.firstIndex(of: ":"), colon != line.text.startIndex,
                !line.text[..<colon].contains(" ")
            else {
                throw FormParseError(offset: line.offset, reason: "Bad header line: \(line.text.debugDescription)")
            }
            headers.append(
                ReceivedHeader(
                    name: String(line.text[..<colon]),
                    value: line.text[line.text.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let bodyStart = headEnd + 4
        let rest = bytes.count - bodyStart
        body = Data()
        if header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            body = try Self.dechunk(bytes, from: bodyStart)
        } else if let declared = header("Content-Length") {
            guard let length = Int(declared), length >= 0 else {
                throw FormParseError(offset: bodyStart, reason: "Bad Content-Length: \(declared)")
            }
            guard length == rest else {
                throw FormParseError(
                    offset: bodyStart + min(length, rest),
                    reason: "Content-Length says \(length) bytes but the capture has \(rest) after the head")
            }
            body = Data(bytes[bodyStart...])
        } else {
            body = Data(bytes[bodyStart...])
        }
    }

    /// Reads and parses the capture at `path`.
    /// - Parameter path: the capture file.
    /// - Throws: ``FormSnapshotError/unreadable(path:reason:)`` when it cannot be read, or
    ///   ``FormSnapshotError/malformedCapture(path:_:)`` when it is not a request.
    public init(contentsOf path: URL) throws(FormSnapshotError) {
        let data: Data
        do { data = try Data(contentsOf: path) } catch {
            throw .unreadable(path: path.path, reason: error.localizedDescription)
        }
        do { try self.init(parsing: data) } catch { throw .malformedCapture(path: path.path, error) }
    }

    /// Removes the chunked transfer coding from the body starting at `start`. Every size and
    /// position is checked before it is used, so no chunk size (up to `7fffffffffffffff` or
    /// longer) can overflow: a chunk larger than what is left of the capture is a truncated
    /// chunk.
    /// - Throws: ``FormParseError`` naming the offset of the bad size line or chunk.
    private static func dechunk(_ bytes: [UInt8], from start: Int) throws(FormParseError) -> Data {
        var out = Data()
        var position = start
        while true {
            guard let lineEnd = FormBodyParser.find([13, 10], in: bytes, from: position) else {
                throw FormParseError(offset: position, reason: "Chunk size line is not terminated")
            }
            let sizeText =
                String(decoding: bytes[position..<lineEnd], as: UTF8.self)
                .split(separator: ";", omittingEmptySubsequences: false).first
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) } ?? ""
            guard let size = chunkSize(sizeText) else {
                throw FormParseError(offset: position, reason: "Bad chunk size: \(String(sizeText.prefix(40)).debugDescription)")
            }
            position = lineEnd + 2
            if size == 0 {
                // Trailer fields, then the final CRLF.
                guard let end = FormBodyParser.find([13, 10], in: bytes, from: position) else {
                    throw FormParseError(offset: position, reason: "Chunked body does not end with CRLF")
                }
                if end == position { return out }
                guard FormBodyParser.find(Array("\r\n\r\n".utf8), in: bytes, from: position) != nil else {
                    throw FormParseError(offset: position, reason: "Chunked trailer is not terminated")
                }
                return out
            }
            let available = bytes.count - position  // position <= bytes.count: it is just past a CRLF
            guard size <= available, available - size >= 2 else {
                throw FormParseError(
                    offset: bytes.count,
                    reason:
                        "Chunk of \(size) bytes (0x\(String(size, radix: 16))) is truncated: the capture has \(available) bytes left after its size line"
                )
            }
            let chunkEnd = position + size  // cannot overflow: size <= available
            guard bytes[chunkEnd] == 13, bytes[chunkEnd + 1] == 10 else {
                throw FormParseError(offset: chunkEnd, reason: "Chunk of \(size) bytes is not followed by CRLF")
            }
            out.append(contentsOf: bytes[position..<chunkEnd])
            position = chunkEnd + 2
        }
    }

    /// The value of a chunk-size (hex digits only, no sign, no `0x`); nil when it is not one or
    /// does not fit an `Int`.
    static func chunkSize(_ text: String) -> Int? {
        guard !text.isEmpty,
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return Int(text, radix: 16)  // nil on overflow
    }

    /// The request head: request line, header fields, empty line.
    public var head: Data {
        var text = "\(method) \(target) \(version)\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// The capture as bytes: ``head`` then the body, as one chunk when the headers say chunked.
    /// - Returns: the bytes, ready to write as a capture file.
    public func serialized() -> Data {
        var data = head
        if header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            if !body.isEmpty {
                data.append(Data((String(body.count, radix: 16) + "\r\n").utf8))
                data.append(body)
                data.append(Data("\r\n".utf8))
            }
            data.append(Data("0\r\n\r\n".utf8))
        } else {
            data.append(body)
        }
        return data
    }
}
