import FormDataKitWire
import Foundation

/// The multipart/form-data layout shared by both façades (RFC 2046 / RFC 7578):
///
///     --B CRLF  part  ( CRLF --B CRLF  part )*  CRLF --B-- CRLF
///
/// where each part is its header lines (`Name: value CRLF`), a blank line, and its content.
/// In-memory content and header text are checked for the delimiter `--B`; a hit throws
/// ``FormDataError/boundaryCollision(boundary:field:)`` so the caller can pick another boundary.
///
/// File content is checked only when `scanFileContent` is on, which the caller does for a
/// boundary the user fixed: a file containing `CRLF --B CRLF` would otherwise add parts of its
/// own to the body. Each file range is then read once, in chunks of `fileScanChunkSize` bytes
/// (bounded memory; a delimiter across a chunk border is found), when the body is encoded. A
/// generated boundary (`0xKhTmLbOuNdArY-` + a random UUID, 122 random bits) is not checked
/// against files: the chance that a file contains it is negligible, and reading every file
/// once more would slow every upload down.
package struct MultipartWriter {
    /// How many bytes of a file are read at a time when file content is scanned.
    static let fileScanChunkSize = ByteSearch.fileChunkSize

    let boundary: String
    private let delimiter: [UInt8]
    private let scanFileContent: Bool
    private let fileScanChunkSize: Int

    /// A writer for `boundary`. With `scanFileContent`, file parts are read and checked for the
    /// delimiter too, `fileScanChunkSize` bytes at a time (use it for a boundary the caller fixed).
    init(boundary: String, scanFileContent: Bool = false, fileScanChunkSize: Int = Self.fileScanChunkSize) {
        self.boundary = boundary
        self.delimiter = MultipartBoundary.delimiter(boundary)
        self.scanFileContent = scanFileContent
        self.fileScanChunkSize = max(1, fileScanChunkSize)
    }

    /// Writes `parts` into `builder`.
    ///
    /// - Throws: ``FormDataError/invalidHeaderValue(field:value:)`` for a boundary that is not
    ///   1–70 of RFC 2046's boundary characters (it goes unquoted into `Content-Type`), or a part
    ///   header (a content type, say) with CR, LF or NUL; ``FormDataError/trailingBackslash(field:role:)``
    ///   for a name or filename ending in `\`; ``FormDataError/boundaryCollision(boundary:field:)``;
    ///   with `scanFileContent`, what reading a file throws (missing, unreadable, changed size).
    func write(_ parts: [MultipartPart], into builder: inout BodyBuilder) throws(FormDataError) {
        try MultipartBoundary.requireValid(boundary)
        appendDelimiterLine(after: "--", before: "\r\n", into: &builder)
        for (index, part) in parts.enumerated() {
            if index > 0 { appendDelimiterLine(after: "\r\n--", before: "\r\n", into: &builder) }
            // Headers and in-memory content are checked for the delimiter where they were written.
            let mark = builder.pendingMark
            if let (name, fileName) = part.disposition {
                try HeaderParameterEscaping.requireNoTrailingBackslash(name, encoding: builder.encoding, field: part.fieldName, role: .name)
                if let fileName {
                    try HeaderParameterEscaping.requireNoTrailingBackslash(
                        fileName, encoding: builder.encoding, field: part.fieldName, role: .fileName)
                }
            }
            if case .formData = part.headerLines, builder.encoding == .utf8, let (name, fileName) = part.disposition {
                try Self.writeFormDataHeaders(
                    name: name, fileName: fileName, contentType: part.contentType, field: part.fieldName, into: &builder)
            } else {
                for header in part.headers { try Self.write(header, field: part.fieldName, into: &builder) }
            }
            builder.appendASCII("\r\n")
            switch part.content {
            case .text(let text):
                try builder.appendText(text, field: part.fieldName, role: .value)
                try check(builder, from: mark, field: part.fieldName)
            case .data(let data):
                try check(builder, from: mark, field: part.fieldName)
                if ByteSearch.contains(data, delimiter) {
                    throw .boundaryCollision(boundary: boundary, field: part.fieldName)
                }
                builder.appendData(data, partContentType: part.contentType)
            case .file(let range):
                try check(builder, from: mark, field: part.fieldName)
                if scanFileContent, try ByteSearch.contains(range, delimiter, chunkSize: fileScanChunkSize) {
                    throw .boundaryCollision(boundary: boundary, field: part.fieldName)
                }
                builder.appendFile(range, partContentType: part.contentType)
            case .stream(let stream):
                try check(builder, from: mark, field: part.fieldName)
                builder.appendStream(stream, partContentType: part.contentType)
            }
        }
        appendDelimiterLine(after: "\r\n--", before: "--\r\n", into: &builder)
    }

    /// Writes `leading`, the boundary, then `trailing`: a delimiter line in pieces, no string
    /// built for it per body.
    private func appendDelimiterLine(after leading: String, before trailing: String, into builder: inout BodyBuilder) {
        builder.appendASCII(leading)
        builder.appendASCII(boundary)
        builder.appendASCII(trailing)
    }

    /// The one boundary-collision loop of both façades: writes `parts` with `boundary` into a
    /// builder from `makeBuilder`; when `boundary` was generated (not `fixed`) and occurs in the
    /// content, writes them again with a new boundary of `style`, up to `attempts` boundaries in
    /// all. A `fixed` boundary is checked against file parts too, and a collision is an error.
    /// - Parameters:
    ///   - parts: the parts, in order.
    ///   - boundary: the first boundary to try.
    ///   - fixed: whether the caller chose `boundary` (never replaced).
    ///   - style: the shape of replacement boundaries.
    ///   - attempts: how many boundaries to try at most (16 for both façades).
    ///   - makeBuilder: a fresh builder for a boundary (debug log prefix written, say).
    /// - Returns: the filled builder and the boundary used.
    /// - Throws: ``FormDataError/boundaryCollision(boundary:field:)`` when every try collided (or
    ///   the fixed boundary did), and what ``write(_:into:)`` throws.
    package static func write(
        _ parts: [MultipartPart], boundary: String, fixed: Bool, style: MultipartBoundary.Style, attempts: Int = 16,
        makeBuilder: (String) -> BodyBuilder
    ) throws(FormDataError) -> (builder: BodyBuilder, boundary: String) {
        var chosen = boundary
        var tries = 1
        while true {
            var builder = makeBuilder(chosen)
            do {
                try MultipartWriter(boundary: chosen, scanFileContent: fixed).write(parts, into: &builder)
                return (builder, chosen)
            } catch .boundaryCollision(let collided, let field) {
                if fixed || tries >= attempts { throw .boundaryCollision(boundary: collided, field: field) }
                tries += 1
                chosen = MultipartBoundary.make(style)
            }
        }
    }

    /// Writes one header line of the part of `field`.
    private static func write(_ header: MultipartHeader, field: String, into builder: inout BodyBuilder) throws(FormDataError) {
        // Content-Disposition carries the escaped name and filename (no CR or LF left); any
        // other header value (a content type) must not break the header block.
        if !header.name.equalsIgnoringASCIICase("Content-Disposition") {
            try HeaderParameterEscaping.requireSafeHeaderValue(header.value, field: field)
        } else if header.value.containsUTF8Byte(where: { $0 == 0 }) {
            // A NUL in a name or filename: parsers cut the string there (C strings), so the part
            // would arrive under another name. Refused, not escaped.
            throw .invalidHeaderValue(field: field, value: header.value)
        }
        builder.appendASCII(header.name)
        builder.appendASCII(": ")
        try builder.appendText(header.value, field: field, role: .name)
        builder.appendASCII("\r\n")
    }

    /// Writes a form-data part's header lines — the same bytes, checks and errors as
    /// ``MultipartPart/headers`` written line by line — straight from its name, filename and
    /// content type, in UTF-8 (a piece at a time is the whole only in an encoding without state).
    private static func writeFormDataHeaders(
        name: String, fileName: String?, contentType: String?, field: String, into builder: inout BodyBuilder
    ) throws(FormDataError) {
        if name.containsUTF8Byte(where: { $0 == 0 }) || fileName?.containsUTF8Byte(where: { $0 == 0 }) == true {
            throw .invalidHeaderValue(field: field, value: HeaderParameterEscaping.formDataDisposition(name: name, fileName: fileName))
        }
        builder.appendASCII("Content-Disposition: form-data; name=\"")
        try builder.appendText(HeaderParameterEscaping.escape(name), field: field, role: .name)
        if let fileName {
            builder.appendASCII("\"; filename=\"")
            try builder.appendText(HeaderParameterEscaping.escape(fileName), field: field, role: .name)
        }
        builder.appendASCII("\"\r\n")
        if let contentType {
            try write(MultipartHeader(name: "Content-Type", value: contentType), field: field, into: &builder)
        }
    }

    private func check(_ builder: BodyBuilder, from mark: Int, field: String) throws(FormDataError) {
        if builder.pendingContains(delimiter, from: mark) {
            throw .boundaryCollision(boundary: boundary, field: field)
        }
    }
}
