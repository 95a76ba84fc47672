import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a JSON body (`application/json`), as AFNetworking's
/// `AFJSONRequestSerializer` did. Methods in ``AFHTTPRequestSerializer/httpMethodsEncodingParametersInURI``
/// still put parameters into the query; nil parameters give no body and no Content-Type.
///
/// ```swift
/// let request = try AFJSONRequestSerializer.serializer()
///     .request(withMethod: "POST", urlString: "https://example.com/items", parameters: ["key": "value"])
/// // body {"key":"value"}
/// ```
open class AFJSONRequestSerializer: AFHTTPRequestSerializer, @unchecked Sendable {
    /// The options passed to `JSONSerialization`; none by default (compact output).
    public var writingOptions: JSONSerialization.WritingOptions {
        get { settings.withLock { $0.jsonWritingOptions } }
        set { settings.withLock { $0.jsonWritingOptions = newValue } }
    }

    /// A serializer writing JSON with `writingOptions`.
    /// - Parameter writingOptions: the `JSONSerialization` options the body is written with.
    /// - Returns: the serializer.
    public class func serializer(withWritingOptions writingOptions: JSONSerialization.WritingOptions) -> Self {
        let serializer = Self.init()
        serializer.writingOptions = writingOptions
        return serializer
    }

    /// `request` with the default headers it lacks and, when `parameters` is not nil, the JSON
    /// body and `Content-Type: application/json` (unless one is set).
    ///
    /// - Throws: ``AFURLRequestSerializationError/invalidJSONParameters`` when `parameters` is not
    ///   a valid JSON object (a top-level string or number included), or `JSONSerialization`'s error.
    /// - Parameters:
    ///   - request: the request to complete.
    ///   - parameters: a JSON object, or query parameters for GET, HEAD and DELETE; nil for none.
    /// - Returns: the completed request.
    open override func request(bySerializingRequest request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        let current = settings.current
        if current.encodesParametersInURI(request) {
            return try super.request(bySerializingRequest: request, withParameters: parameters)
        }
        var result = current.withDefaultHeaders(request)
        if let parameters {
            if result.value(forHTTPHeaderField: "Content-Type") == nil {
                result.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            guard JSONSerialization.isValidJSONObject(parameters) else {
                throw AFURLRequestSerializationError.invalidJSONParameters
            }
            result.httpBody = try JSONSerialization.data(withJSONObject: parameters, options: current.jsonWritingOptions)
        }
        return result
    }
}
