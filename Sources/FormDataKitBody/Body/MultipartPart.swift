import FormDataKitWire
import Foundation

/// One header line of a multipart part.
package struct MultipartHeader: Sendable, Equatable {
    var name: String
    var value: String

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// One part of a multipart body, in the shape both façades produce: headers in order, then content.
package struct MultipartPart: Sendable {
    /// Where a part's content comes from.
    package enum Content: Sendable {
        /// A string, written in the form's encoding (a value field).
        case text(String)
        /// Bytes in memory (a data field).
        case data(Data)
        /// A file range, read when the body is read.
        case file(FileRange)
        /// A stream, read when the body is read (its content cannot be scanned for the boundary).
        case stream(StreamedContent)
    }

    /// How a part's header lines are made.
    enum HeaderLines: Sendable {
        /// `Content-Disposition: form-data; name="…"` (with `; filename="…"` when the part has
        /// one), then `Content-Type: …` when it declares one: written from ``disposition`` and
        /// ``contentType`` when the part is written, no header strings made before.
        case formData
        /// Exactly these lines, in order (AF's `appendPart(withHeaders:)`).
        case exactly([MultipartHeader])
    }

    /// The field name, for error messages.
    var fieldName: String
    /// How the part's header lines are made (see ``headers``).
    var headerLines: HeaderLines
    var content: Content
    /// The part's content type, when it declares one (used by adaptive compression).
    var contentType: String?
    /// The name and filename the `Content-Disposition` was made from, for the checks on them
    /// when the part is written; nil for headers a caller wrote (AF's `appendPart(withHeaders:)`).
    var disposition: (name: String, fileName: String?)?

    /// A part with exactly `headers`.
    package init(
        fieldName: String, headers: [MultipartHeader], content: Content, contentType: String?,
        disposition: (name: String, fileName: String?)? = nil
    ) {
        self.init(
            fieldName: fieldName, headerLines: .exactly(headers), content: content, contentType: contentType, disposition: disposition)
    }

    private init(
        fieldName: String, headerLines: HeaderLines, content: Content, contentType: String?, disposition: (name: String, fileName: String?)?
    ) {
        self.fieldName = fieldName
        self.headerLines = headerLines
        self.content = content
        self.contentType = contentType
        self.disposition = disposition
    }

    /// The part's header lines, in order, as they are written.
    var headers: [MultipartHeader] {
        switch headerLines {
        case .exactly(let headers):
            return headers
        case .formData:
            let (name, fileName) = disposition ?? (fieldName, nil)
            var lines = [
                MultipartHeader(
                    name: "Content-Disposition", value: HeaderParameterEscaping.formDataDisposition(name: name, fileName: fileName))
            ]
            if let contentType { lines.append(MultipartHeader(name: "Content-Type", value: contentType)) }
            return lines
        }
    }

    // MARK: - The part headers both façades write

    /// A value part: `Content-Disposition: form-data; name="…"` (escaped as browsers do, see
    /// ``HeaderParameterEscaping``), then `content`.
    /// - Parameters:
    ///   - name: the field name.
    ///   - content: the value (text in the form's charset, or bytes).
    /// - Returns: the part.
    package static func value(name: String, content: Content) -> MultipartPart {
        MultipartPart(fieldName: name, headerLines: .formData, content: content, contentType: nil, disposition: (name, nil))
    }

    /// A file part: `Content-Disposition: form-data; name="…"; filename="…"` and
    /// `Content-Type: …`, then `content`.
    /// - Parameters:
    ///   - name: the field name.
    ///   - fileName: the `filename` sent.
    ///   - contentType: the part's type (checked for CR, LF and NUL when written).
    ///   - content: the bytes, or the file range that holds them.
    /// - Returns: the part.
    package static func file(name: String, fileName: String, contentType: String, content: Content) -> MultipartPart {
        MultipartPart(fieldName: name, headerLines: .formData, content: content, contentType: contentType, disposition: (name, fileName))
    }
}
