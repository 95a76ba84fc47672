import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request serializer: encodes parameters into a copy of a request (AFNetworking's
/// `AFURLRequestSerialization` protocol).
public protocol AFURLRequestSerialization: AnyObject, Sendable {
    /// A copy of `request` with `parameters` encoded into it, or an error when they cannot be.
    func request(bySerializingRequest request: URLRequest, withParameters parameters: Any?) throws -> URLRequest
}

/// How ``AFHTTPRequestSerializer`` turns parameters into a query string.
public enum AFHTTPRequestQueryStringSerializationStyle: UInt, Sendable {
    /// ``AFQueryStringFromParameters(_:)``: sorted, flattened, percent-escaped pairs.
    case defaultStyle = 0
}
