import Foundation

/// The multipart/form-data layout shared by both façades (RFC 2046 / RFC 7578):
///
///     --B CRLF  part  ( CRLF --B CRLF  part )*  CRLF --B-- CRLF
///
/// where each part is its header lines (`Name: value CRLF`), a blank line, and its content.
/// In-memory content and header text are checked for the delimiter `--B`; a hit throws
/// ``FormDataError/boundaryCollision(boundary:field:)`` so the caller can pick another boundary.
package struct MultipartWriter {
    package let boundary: String
    private let delimiter: [UInt8]

    package init(boundary: String) {
        self.boundary = boundary
        self.delimiter = MultipartBoundary.delimiter(boundary)
    }

    /// Writes `parts` into `builder`.
    package func write(_ parts: [MultipartPart], into builder: inout BodyBuilder) throws(FormDataError) {
        builder.appendASCII("--\(boundary)\r\n")
        for (index, part) in parts.enumerated() {
            if index > 0 { builder.appendASCII("\r\n--\(boundary)\r\n") }
            for header in part.headers {
                let line = "\(header.name): \(header.value)\r\n"
                let bytes = try IANACharset.encode(line, builder.encoding, field: part.fieldName, role: .name)
                try check(bytes, field: part.fieldName)
                builder.appendEncoded(Array(bytes), debugText: line)
            }
            builder.appendASCII("\r\n")
            switch part.content {
            case .text(let text):
                let bytes = try IANACharset.encode(text, builder.encoding, field: part.fieldName, role: .value)
                try check(bytes, field: part.fieldName)
                builder.appendEncoded(Array(bytes), debugText: text)
            case .data(let data):
                try check(data, field: part.fieldName)
                builder.appendData(data, partContentType: part.contentType)
            case .file(let range):
                builder.appendFile(range, partContentType: part.contentType)
            }
        }
        builder.appendASCII("\r\n--\(boundary)--\r\n")
    }

    private func check(_ bytes: Data, field: String) throws(FormDataError) {
        if ByteSearch.contains(bytes, delimiter) { throw .boundaryCollision(boundary: boundary, field: field) }
    }
}
