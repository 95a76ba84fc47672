#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// A strict parser for `multipart/form-data` (RFC 7578 / RFC 2046) and
/// `application/x-www-form-urlencoded` bodies, independent of FormDataKit's encoders.
///
/// Strict means: a multipart body must have an opening delimiter (a preamble before it, ending
/// in CRLF, is tolerated as RFC 2046 allows) and the closing one (`--boundary--`, then nothing,
/// or CRLF and an epilogue that is ignored); every part header line must be `Name: value`; every
/// part needs `Content-Disposition: form-data; name="…"`; a declared length must match. Each
/// error names the byte offset where parsing stopped.
///
/// Text (names, file names, values) is read in the charset the body declares: for a URL-encoded
/// body the `charset` parameter of its `Content-Type`; for a multipart part its own
/// `Content-Type` charset, else the form's `_charset_` field, else the request's `charset`
/// (names and file names: the `_charset_` field, else the request's). Without one, or when the
/// bytes are not valid in it, text is UTF-8, else ISO-8859-1. The raw bytes are kept
/// (``ParsedPart/content``): comparisons use them, never the text.
public enum FormBodyParser {
    /// Parses `body` according to `contentType` (multipart or URL-encoded). When
    /// `expectedLength` is given, a body of any other length is an error.
    /// - Parameters:
    ///   - body: the body bytes (not compressed).
    ///   - contentType: the request's `Content-Type` (its boundary for multipart).
    ///   - expectedLength: the `Content-Length` the request declared, nil when it declared none.
    /// - Returns: the fields and files.
    /// - Throws: ``FormParseError`` with the offset where the body stopped following the rules.
    public static func parse(_ body: Data, contentType: String, expectedLength: Int? = nil) throws(FormParseError) -> ParsedForm {
        ParsedForm(parts: try parseParts(body, contentType: contentType, expectedLength: expectedLength))
    }

    /// Parses `body` like ``parse(_:contentType:expectedLength:)`` but keeps every part whole, in
    /// body order: raw content bytes and all part headers (URL-encoded pairs become parts without
    /// headers).
    /// - Parameters:
    ///   - body: the body bytes (not compressed).
    ///   - contentType: the request's `Content-Type` (its boundary for multipart).
    ///   - expectedLength: the `Content-Length` the request declared, nil when it declared none.
    /// - Returns: the parts, in body order.
    /// - Throws: ``FormParseError`` with the offset where the body stopped following the rules.
    public static func parseParts(_ body: Data, contentType: String, expectedLength: Int? = nil) throws(FormParseError) -> [ParsedPart] {
        if let expectedLength, expectedLength != body.count {
            throw FormParseError(offset: body.count, reason: "Content-Length says \(expectedLength) bytes but the body has \(body.count)")
        }
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let charset = parameter("charset", in: contentType).flatMap { $0.isEmpty ? nil : $0 }
        switch mediaType {
        case "multipart/form-data":
            guard let boundary = parameter("boundary", in: contentType), !boundary.isEmpty else {
                throw FormParseError(offset: 0, reason: "Content-Type has no boundary parameter: \(contentType)")
            }
            return try multipartParts(body, boundary: boundary, charset: charset)
        case "application/x-www-form-urlencoded":
            return try urlEncodedParts(body, charset: charset)
        default:
            throw FormParseError(offset: 0, reason: "Not a form content type: \(contentType)")
        }
    }

    /// The value of parameter `name` in a header value such as `multipart/form-data; boundary=x`
    /// (quoted or not; compared case-insensitively).
    /// - Parameters:
    ///   - name: the parameter's name, in any case.
    ///   - headerValue: the whole header value.
    /// - Returns: the parameter's value, unquoted; nil when it is not there.
    public static func parameter(_ name: String, in headerValue: String) -> String? {
        for (key, value) in parameters(of: headerValue) where key == name.lowercased() { return value }
        return nil
    }

    // MARK: - URL-encoded

    /// Parses `name=value&…` with percent escapes and `+` for space.
    /// - Parameters:
    ///   - body: the body bytes.
    ///   - charset: the charset the escaped bytes are text in (the `charset` parameter of the
    ///     body's `Content-Type`); nil: UTF-8, else ISO-8859-1.
    /// - Returns: the fields, in order.
    /// - Throws: ``FormParseError`` for a bad percent escape.
    public static func parseURLEncoded(_ body: Data, charset: String? = nil) throws(FormParseError) -> ParsedForm {
        ParsedForm(parts: try urlEncodedParts(body, charset: charset))
    }

    static func urlEncodedParts(_ body: Data, charset: String? = nil) throws(FormParseError) -> [ParsedPart] {
        var parts: [ParsedPart] = []
        let bytes = [UInt8](body)
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                let pair = bytes[start..<end]
                let equals = pair.firstIndex(of: UInt8(ascii: "="))
                let rawName = equals.map { bytes[start..<$0] } ?? pair
                let rawValue = equals.map { bytes[($0 + 1)..<end] } ?? []
                let name = try percentDecode(rawName, offset: start)
                let value = try percentDecode(rawValue, offset: equals.map { $0 + 1 } ?? end)
                parts.append(ParsedPart(name: text(name, charset: charset), fileName: nil, headers: [], content: value, charset: charset))
            }
            start = end + 1
        }
        return parts
    }

    private static func percentDecode(_ bytes: ArraySlice<UInt8>, offset: Int) throws(FormParseError) -> Data {
        // Runs without `%` or `+` are copied whole; the output is built in an array, then once
        // into Data (appending to Data byte by byte cost seconds for a 4 MiB value in debug builds).
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        var run = index
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+") else {
                index += 1
                continue
            }
            out.append(contentsOf: bytes[run..<index])
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else {
                    throw FormParseError(offset: offset + (index - bytes.startIndex), reason: "Bad percent escape")
                }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(UInt8(ascii: " "))
                index += 1
            }
            run = index
        }
        out.append(contentsOf: bytes[run..<index])
        return Data(out)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // MARK: - Multipart

    /// Parses a multipart body delimited by `boundary`.
    /// - Parameters:
    ///   - body: the body bytes.
    ///   - boundary: the boundary from the `Content-Type`.
    ///   - charset: the `charset` parameter of the request's `Content-Type`, nil when it has none
    ///     (a part's own charset and the `_charset_` field come first).
    /// - Returns: the fields and files.
    /// - Throws: ``FormParseError`` with the offset where the body stopped following RFC 2046.
    public static func parseMultipart(_ body: Data, boundary: String, charset: String? = nil) throws(FormParseError) -> ParsedForm {
        ParsedForm(parts: try multipartParts(body, boundary: boundary, charset: charset))
    }

    /// A part as framed, its header values still bytes (decoded once the form's charset is known).
    private struct FramedPart {
        var headers: [(name: String, value: Data)]
        var content: Data
    }

    static func multipartParts(_ body: Data, boundary: String, charset: String? = nil) throws(FormParseError) -> [ParsedPart] {
        let framed = try framedParts(body, boundary: boundary)
        // Names and file names: the `_charset_` field (HTML's way of saying what the form is
        // in), else the request's charset. Content: the part's own charset first.
        let declared = framed.lazy.compactMap { part -> String? in
            let disposition = part.headers.first { $0.name.lowercased() == "content-disposition" }.map { text($0.value) } ?? ""
            guard parameter("name", in: disposition) == "_charset_", parameter("filename", in: disposition) == nil else { return nil }
            let name = text(part.content).trimmingCharacters(in: .whitespaces)
            return name.isEmpty ? nil : name
        }.first
        let formCharset = declared ?? charset
        return framed.map { part in
            let headers = part.headers.map { ReceivedHeader(name: $0.name, value: text($0.value, charset: formCharset)) }
            let disposition = headers.first { $0.name.lowercased() == "content-disposition" }?.value ?? ""
            let type = headers.first { $0.name.lowercased() == "content-type" }?.value
            let own = type.flatMap { parameter("charset", in: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            return ParsedPart(
                name: parameter("name", in: disposition) ?? "", fileName: parameter("filename", in: disposition), headers: headers,
                content: part.content, charset: own ?? formCharset)
        }
    }

    private static func framedParts(_ body: Data, boundary: String) throws(FormParseError) -> [FramedPart] {
        let bytes = [UInt8](body)
        let dash = Array("--\(boundary)".utf8)
        let delimiter = Array("\r\n--\(boundary)".utf8)
        var position: Int
        if bytes.starts(with: dash) {
            position = dash.count
        } else if let opening = find(delimiter, in: bytes, from: 0) {
            position = opening + delimiter.count  // after a preamble
        } else {
            throw FormParseError(offset: 0, reason: "No opening boundary --\(boundary) in the body")
        }
        var parts: [FramedPart] = []
        while true {
            // After a delimiter: "--" closes the body, CRLF starts a part.
            if bytes.count - position >= 2 && bytes[position] == UInt8(ascii: "-") && bytes[position + 1] == UInt8(ascii: "-") {
                let rest = bytes.count - (position + 2)
                if rest == 0 || (rest >= 2 && bytes[position + 2] == 13 && bytes[position + 3] == 10) { return parts }  // epilogue ignored
                throw FormParseError(
                    offset: position + 2, reason: "\(rest) unexpected bytes after the closing boundary (an epilogue must follow a CRLF)")
            }
            guard bytes.count - position >= 2, bytes[position] == 13, bytes[position + 1] == 10 else {
                throw FormParseError(offset: position, reason: "Expected CRLF or -- after the boundary")
            }
            position += 2
            let partStart = position
            // Headers.
            var headers: [(name: String, value: Data)] = []
            while true {
                guard let lineEnd = find([13, 10], in: bytes, from: position) else {
                    throw FormParseError(offset: position, reason: "Part headers are not terminated")
                }
                if lineEnd == position {
                    position += 2
                    break
                }
                let line = bytes[position..<lineEnd]
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > position,
                    line[position..<colon].allSatisfy(isTokenByte)
                else {
                    throw FormParseError(offset: position, reason: "Bad part header line: \(text(Data(line)).debugDescription)")
                }
                let name = String(decoding: line[position..<colon], as: UTF8.self)
                var value = line[(colon + 1)...]
                while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
                while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
                headers.append((name, Data(value)))
                position = lineEnd + 2
            }
            guard let disposition = headers.first(where: { $0.name.lowercased() == "content-disposition" }).map({ text($0.value) }) else {
                throw FormParseError(offset: partStart, reason: "Part has no Content-Disposition header")
            }
            let dispositionType = disposition.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard dispositionType == "form-data", parameter("name", in: disposition) != nil else {
                throw FormParseError(offset: partStart, reason: "Content-Disposition is not form-data with a name: \(disposition)")
            }
            // Content up to the next delimiter.
            guard let contentEnd = find(delimiter, in: bytes, from: position) else {
                throw FormParseError(offset: position, reason: "Missing closing boundary --\(boundary)--")
            }
            parts.append(FramedPart(headers: headers, content: Data(bytes[position..<contentEnd])))
            position = contentEnd + delimiter.count
        }
    }

    // MARK: - Helpers

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The first index of `needle` in `haystack` at or after `start`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, start <= haystack.count, needle.count <= haystack.count - start else { return nil }
        return haystack.withUnsafeBytes { hay -> Int? in
            needle.withUnsafeBytes { pin -> Int? in
                let first = Int32(needle[0])
                var position = start
                let last = hay.count - needle.count
                while position <= last {
                    guard let hit = memchr(hay.baseAddress! + position, first, last - position + 1) else { return nil }
                    let index = UnsafeRawPointer(hit) - hay.baseAddress!
                    if memcmp(hay.baseAddress! + index, pin.baseAddress!, needle.count) == 0 { return index }
                    position = index + 1
                }
                return nil
            }
        }
    }

    /// `data` as text in `charset` (an IANA name) when it names one this platform converts and
    /// the bytes are valid in it; otherwise ``text(_:)``.
    static func text(_ data: Data, charset: String?) -> String {
        guard let charset, let encoding = String.Encoding.iana(charset), encoding != .utf8,
            let decoded = IANACharset.decode(data, encoding)
        else { return text(data) }
        return decoded
    }

    /// `data` as UTF-8, or ISO-8859-1 when it is not valid UTF-8.
    static func text(_ data: Data) -> String {
        // Not `String(data:encoding: .utf8)`: Foundation drops a leading U+FEFF (BOM) there, and
        // a value that starts with one must come back whole.
        let utf8 = String(decoding: data, as: UTF8.self)
        // Decoding replaced nothing when the bytes came back the same (compared as memory: an
        // element-by-element comparison took seconds for a 4 MiB value in debug builds).
        let same =
            utf8.utf8.withContiguousStorageIfAvailable { decoded in
                data.withUnsafeBytes { raw in
                    decoded.count == raw.count && (raw.isEmpty || memcmp(decoded.baseAddress!, raw.baseAddress!, raw.count) == 0)
                }
            } ?? utf8.utf8.elementsEqual(data)
        if same { return utf8 }
        return String(data: data, encoding: .isoLatin1) ?? ""
    }

    /// The `; key=value` parameters of a header value, keys lowercased, quotes removed; a
    /// backslash in a quoted value is kept as it is (the encoder never escapes with it).
    static func parameters(of headerValue: String) -> [(String, String)] {
        var result: [(String, String)] = []
        let characters = Array(headerValue)
        var index = characters.firstIndex(of: ";") ?? characters.endIndex
        while index < characters.endIndex {
            index += 1  // skip ';'
            while index < characters.endIndex && characters[index] == " " { index += 1 }
            var key = ""
            while index < characters.endIndex && characters[index] != "=" && characters[index] != ";" {
                key.append(characters[index])
                index += 1
            }
            var value = ""
            if index < characters.endIndex && characters[index] == "=" {
                index += 1
                if index < characters.endIndex && characters[index] == "\"" {
                    index += 1
                    // No backslash escapes: FormDataKit (as browsers, WHATWG) sends `"` as %22 and a
                    // backslash as itself, and a Shift_JIS 0x5C byte read as Latin-1 is a backslash.
                    while index < characters.endIndex && characters[index] != "\"" {
                        value.append(characters[index])
                        index += 1
                    }
                    index += 1  // closing quote
                    while index < characters.endIndex && characters[index] != ";" { index += 1 }
                } else {
                    while index < characters.endIndex && characters[index] != ";" {
                        value.append(characters[index])
                        index += 1
                    }
                    value = value.trimmingCharacters(in: .whitespaces)
                }
            }
            result.append((key.trimmingCharacters(in: .whitespaces).lowercased(), value))
        }
        return result
    }
}
