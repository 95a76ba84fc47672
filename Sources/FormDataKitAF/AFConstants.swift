import Foundation

/// The error domain of request-serialization errors: `com.alamofire.error.serialization.request`.
public let AFURLRequestSerializationErrorDomain = "com.alamofire.error.serialization.request"

/// AFNetworking's user-info key for the request a failing operation made. Declared by
/// AFNetworking 4.x but never put into any error; kept for code that refers to it.
public let AFNetworkingOperationFailingURLRequestErrorKey = "com.alamofire.serialization.request.error.response"

/// The packet size AFNetworking suggests for throttling uploads on slow (3G/EDGE) links: 16 KiB.
public let kAFUploadStream3GSuggestedPacketSize: Int = 1024 * 16

/// The delay AFNetworking suggests between throttled packets on slow links: 0.2 seconds.
public let kAFUploadStream3GSuggestedDelay: TimeInterval = 0.2
