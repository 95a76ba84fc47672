import Foundation
import FormDataKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a request serializer is configured with, kept behind one lock so a serializer can
/// be shared across threads and copied whole.
struct AFSerializerSettings {
    var headers: [String: String]
    var stringEncoding: String.Encoding = .utf8
    var allowsCellularAccess: Bool?
    var cachePolicy: URLRequest.CachePolicy?
    var httpShouldHandleCookies: Bool?
    var httpShouldUsePipelining: Bool?
    var networkServiceType: URLRequest.NetworkServiceType?
    var timeoutInterval: TimeInterval?
    var methodsEncodingParametersInURI: Set<String> = ["GET", "HEAD", "DELETE"]
    var queryStringStyle: AFHTTPRequestQueryStringSerializationStyle = .defaultStyle
    var queryStringBlock: AFHTTPRequestSerializer.QueryStringSerialization?
    var multipartBoundary: String?
    /// ``AFHTTPRequestSerializer/shouldCompressRequestBody``.
    var shouldCompressRequestBody = false
    /// ``AFHTTPRequestSerializer/shouldSendIdempotencyKey``.
    var shouldSendIdempotencyKey = false
    /// ``AFJSONRequestSerializer/writingOptions``.
    var jsonWritingOptions: JSONSerialization.WritingOptions = []
    /// ``AFPropertyListRequestSerializer/format``.
    var propertyListFormat: PropertyListSerialization.PropertyListFormat = .xml
    /// ``AFPropertyListRequestSerializer/writeOptions``.
    var propertyListWriteOptions: PropertyListSerialization.WriteOptions = 0

    /// Copies the request properties that were set onto `request`.
    func applyRequestProperties(to request: inout URLRequest) {
        if let allowsCellularAccess { request.allowsCellularAccess = allowsCellularAccess }
        if let cachePolicy { request.cachePolicy = cachePolicy }
        if let httpShouldHandleCookies { request.httpShouldHandleCookies = httpShouldHandleCookies }
        if let httpShouldUsePipelining { AFPipelining.set(httpShouldUsePipelining, on: &request) }
        if let networkServiceType { request.networkServiceType = networkServiceType }
        if let timeoutInterval { request.timeoutInterval = timeoutInterval }
    }

    /// `request` plus each default header it has no value for (checked case-insensitively on the
    /// original request; headers already on it are never replaced).
    func withDefaultHeaders(_ request: URLRequest) -> URLRequest {
        var result = request
        for field in headers.keys.sorted() where request.value(forHTTPHeaderField: field) == nil {
            result.setValue(headers[field], forHTTPHeaderField: field)
        }
        if shouldSendIdempotencyKey, result.value(forHTTPHeaderField: IdempotencyKey.headerName) == nil {
            result.setValue(IdempotencyKey.make(), forHTTPHeaderField: IdempotencyKey.headerName)
        }
        return result
    }

    /// Whether `request`'s method puts parameters into the URL.
    func encodesParametersInURI(_ request: URLRequest) -> Bool {
        methodsEncodingParametersInURI.contains((request.httpMethod ?? "GET").uppercased())
    }
}

/// Sets `httpShouldUsePipelining` (deprecated by Foundation, still honoured) through a protocol
/// requirement, so the serializer can keep offering AFNetworking's property.
private protocol AFPipeliningConfigurable {
    var httpShouldUsePipelining: Bool { get set }
}

extension URLRequest: AFPipeliningConfigurable {}

private enum AFPipelining {
    static func set<Request: AFPipeliningConfigurable>(_ value: Bool, on request: inout Request) {
        request.httpShouldUsePipelining = value
    }
}
