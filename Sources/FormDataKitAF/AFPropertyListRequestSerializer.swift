import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a property-list body (`application/x-plist`), as AFNetworking's
/// `AFPropertyListRequestSerializer` did. Methods in
/// ``AFHTTPRequestSerializer/httpMethodsEncodingParametersInURI`` still put parameters into the
/// query; nil parameters give no body and no Content-Type.
open class AFPropertyListRequestSerializer: AFHTTPRequestSerializer, @unchecked Sendable {
    /// The property-list format written; XML by default.
    public var format: PropertyListSerialization.PropertyListFormat {
        get { settings.withLock { $0.propertyListFormat } }
        set { settings.withLock { $0.propertyListFormat = newValue } }
    }

    /// The options passed to `PropertyListSerialization`; 0 by default.
    public var writeOptions: PropertyListSerialization.WriteOptions {
        get { settings.withLock { $0.propertyListWriteOptions } }
        set { settings.withLock { $0.propertyListWriteOptions = newValue } }
    }

    /// A serializer writing XML property lists with no options (AFNetworking's `+serializer`).
    /// - Returns: the serializer.
    open override class func serializer() -> Self {
        serializer(withFormat: .xml, writeOptions: 0)
    }

    /// A serializer writing `format` with `writeOptions`.
    /// - Parameters:
    ///   - format: the property-list format (XML or binary; OpenStep cannot be written).
    ///   - writeOptions: `PropertyListSerialization`'s write options (none are defined; 0).
    /// - Returns: the serializer.
    public class func serializer(
        withFormat format: PropertyListSerialization.PropertyListFormat,
        writeOptions: PropertyListSerialization.WriteOptions
    ) -> Self {
        let serializer = Self.init()
        serializer.format = format
        serializer.writeOptions = writeOptions
        return serializer
    }

    /// `request` with the default headers it lacks and, when `parameters` is not nil, the property
    /// list body and `Content-Type: application/x-plist` (unless one is set).
    ///
    /// - Throws: `PropertyListSerialization`'s error (e.g. NSCocoaErrorDomain 3851 for a
    ///   dictionary with a non-string key).
    /// - Parameters:
    ///   - request: the request to complete.
    ///   - parameters: a property-list value, or query parameters for GET, HEAD and DELETE; nil for none.
    /// - Returns: the completed request.
    open override func request(bySerializingRequest request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        let current = settings.current
        if current.encodesParametersInURI(request) {
            return try super.request(bySerializingRequest: request, withParameters: parameters)
        }
        var result = current.withDefaultHeaders(request)
        if let parameters {
            if result.value(forHTTPHeaderField: "Content-Type") == nil {
                result.setValue("application/x-plist", forHTTPHeaderField: "Content-Type")
            }
            result.httpBody = try PropertyListSerialization.data(
                fromPropertyList: parameters, format: current.propertyListFormat, options: current.propertyListWriteOptions)
        }
        return result
    }
}
