import Foundation

/// One header line of a multipart part.
package struct MultipartHeader: Sendable, Equatable {
    package var name: String
    package var value: String

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
    }

    /// The field name, for error messages.
    package var fieldName: String
    package var headers: [MultipartHeader]
    package var content: Content
    /// The part's content type, when it declares one (used by adaptive compression).
    package var contentType: String?

    package init(fieldName: String, headers: [MultipartHeader], content: Content, contentType: String?) {
        self.fieldName = fieldName
        self.headers = headers
        self.content = content
        self.contentType = contentType
    }
}
