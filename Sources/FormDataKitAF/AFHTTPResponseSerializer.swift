import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Validates a response's status code and MIME type and returns its body (AFNetworking's
/// `AFHTTPResponseSerializer`). Acceptable status codes are 200–299; any content type is
/// acceptable unless ``acceptableContentTypes`` is set. Safe to share across threads.
open class AFHTTPResponseSerializer: @unchecked Sendable {
    struct Settings {
        var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
        var acceptableContentTypes: Set<String>?
        var stringEncoding: String.Encoding = .utf8
        var jsonReadingOptions: JSONSerialization.ReadingOptions = []
        var removesKeysWithNullValues = false
    }

    let settings: Locked<Settings>

    /// A serializer accepting 200–299 and any content type.
    public required init() {
        settings = Locked(Settings())
    }

    /// A new serializer (AFNetworking's `+serializer`).
    /// - Returns: a serializer accepting status codes 200–299 and any MIME type.
    open class func serializer() -> Self { Self.init() }

    /// A copy with every setting of this serializer.
    /// - Returns: the copy, independent of this serializer.
    public func copy() -> Self {
        let copy = Self.init()
        let current = settings.current
        copy.settings.withLock { $0 = current }
        return copy
    }

    /// The status codes that pass validation; 200–299 by default.
    public var acceptableStatusCodes: IndexSet {
        get { settings.withLock { $0.acceptableStatusCodes } }
        set { settings.withLock { $0.acceptableStatusCodes = newValue } }
    }

    /// The MIME types that pass validation (parameters ignored); nil (the default) accepts any.
    public var acceptableContentTypes: Set<String>? {
        get { settings.withLock { $0.acceptableContentTypes } }
        set { settings.withLock { $0.acceptableContentTypes = newValue } }
    }

    /// The encoding for text responses; UTF-8 by default (kept for AFNetworking compatibility).
    public var stringEncoding: String.Encoding {
        get { settings.withLock { $0.stringEncoding } }
        set { settings.withLock { $0.stringEncoding = newValue } }
    }

    /// Throws when `response` is an HTTP response whose MIME type or status code is not
    /// acceptable. An unacceptable MIME type with an empty body is not an error (as in
    /// AFNetworking, which only reported it for a non-empty body).
    ///
    /// - Throws: ``AFURLResponseSerializationError``: the status-code error (with the
    ///   content-type error as its underlying error when both failed), or the content-type error.
    /// - Parameters:
    ///   - response: the response; anything but an `HTTPURLResponse` is accepted.
    ///   - data: the body, nil or empty for none.
    open func validate(_ response: URLResponse?, data: Data?) throws {
        guard let response = response as? HTTPURLResponse else { return }
        let current = settings.current
        var contentTypeError: AFURLResponseSerializationError?
        if let acceptable = current.acceptableContentTypes {
            let mime = Self.mimeType(of: response)
            let emptyAndUntyped = mime == nil && (data?.isEmpty ?? true)
            if !emptyAndUntyped, !acceptable.contains(mime ?? ""), let data, !data.isEmpty, response.url != nil {
                contentTypeError = .unacceptableContentType(mime ?? "", response: response, data: data)
            }
        }
        if !current.acceptableStatusCodes.contains(response.statusCode), response.url != nil {
            throw AFURLResponseSerializationError.unacceptableStatusCode(
                response.statusCode, response: response, data: data,
                underlying: contentTypeError.map(AFURLResponseSerializationErrorBox.init))
        }
        if let contentTypeError { throw contentTypeError }
    }

    /// The response object for `data`: validates, then returns the body as it is.
    /// - Parameters:
    ///   - response: the response.
    ///   - data: the body.
    /// - Returns: `data`, unchanged.
    /// - Throws: what ``validate(_:data:)`` throws.
    open func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        try validate(response, data: data)
        return data
    }

    /// The MIME type of `response` without parameters, lowercased.
    static func mimeType(of response: HTTPURLResponse) -> String? {
        guard let header = response.value(forHTTPHeaderField: "Content-Type") else { return response.mimeType }
        let type = header.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return type.isEmpty ? nil : type.lowercased()
    }
}
