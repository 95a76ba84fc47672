import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Validates a response and decodes its JSON body (AFNetworking's `AFJSONResponseSerializer`):
/// acceptable types `application/json`, `text/json`, `text/javascript`; an empty body or a single
/// space gives nil.
open class AFJSONResponseSerializer: AFHTTPResponseSerializer, @unchecked Sendable {
    /// A serializer accepting JSON content types.
    public required init() {
        super.init()
        acceptableContentTypes = ["application/json", "text/json", "text/javascript"]
    }

    /// A serializer with `readingOptions`.
    /// - Parameter readingOptions: the `JSONSerialization` options the body is read with.
    /// - Returns: the serializer.
    public class func serializer(withReadingOptions readingOptions: JSONSerialization.ReadingOptions) -> Self {
        let serializer = Self.init()
        serializer.readingOptions = readingOptions
        return serializer
    }

    /// The options passed to `JSONSerialization`; none by default.
    public var readingOptions: JSONSerialization.ReadingOptions {
        get { settings.withLock { $0.jsonReadingOptions } }
        set { settings.withLock { $0.jsonReadingOptions = newValue } }
    }

    /// Whether `null` values are removed from dictionaries (and arrays); false by default.
    public var removesKeysWithNullValues: Bool {
        get { settings.withLock { $0.removesKeysWithNullValues } }
        set { settings.withLock { $0.removesKeysWithNullValues = newValue } }
    }

    /// The decoded JSON. A content-type failure throws; after a status-code failure the body
    /// is still decoded, and the status error is thrown (AFNetworking returned both).
    ///
    /// - Throws: ``AFURLResponseSerializationError``, or the JSON parser's error.
    /// - Parameters:
    ///   - response: the response.
    ///   - data: the body; nil or empty (or a single space) gives nil.
    /// - Returns: the decoded JSON value, with nulls removed when ``removesKeysWithNullValues``.
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        var validationError: (any Error)?
        do {
            try validate(response, data: data)
        } catch let error as AFURLResponseSerializationError {
            if case .unacceptableContentType = error { throw error }
            validationError = error
        }
        guard let data, !data.isEmpty, data != Data(" ".utf8) else {
            if let validationError { throw validationError }
            return nil
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: readingOptions)
        } catch {
            throw validationError ?? error
        }
        if let validationError { throw validationError }
        return removesKeysWithNullValues ? Self.removingNulls(object) : object
    }

    /// `object` without `NSNull` values in its dictionaries and arrays, recursively.
    static func removingNulls(_ object: Any) -> Any {
        if let dictionary = object as? [String: Any] {
            return dictionary.filter { !($0.value is NSNull) }.mapValues(removingNulls)
        }
        if let array = object as? [Any] {
            return array.filter { !($0 is NSNull) }.map(removingNulls)
        }
        return object
    }
}
