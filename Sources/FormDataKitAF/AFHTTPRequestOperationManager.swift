import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AFNetworking 2's `AFHTTPRequestOperationManager`: builds requests with ``requestSerializer``,
/// makes an ``AFHTTPRequestOperation`` per request and runs it on ``operationQueue``.
///
/// ```swift
/// let manager = AFHTTPRequestOperationManager(baseURL: URL(string: "https://api.example.com/v1/"))
/// manager.post("upload", parameters: ["album": "2026"], constructingBodyWith: { form in
///     try form.appendPart(withFileURL: URL(fileURLWithPath: "/tmp/photo.jpg"), name: "photo")
/// }, success: { operation, object in print(object ?? "") }, failure: { operation, error in print(error) })
/// ```
///
/// Sent by the same send driver as `AFHTTPSessionManager` (through ``transport``). The
/// operation queue is a plain `OperationQueue`; success and failure run on ``completionQueue``
/// (a global queue when nil — AF 2 used the main queue, which a Linux process may not run).
open class AFHTTPRequestOperationManager: @unchecked Sendable {
    // `@unchecked`: mutable settings are in `settings` (a lock).

    /// Called with the operation and the serialized response object.
    public typealias Success = @Sendable (AFHTTPRequestOperation, Any?) -> Void
    /// Called with the operation (nil when the request could not be built) and the error.
    public typealias Failure = @Sendable (AFHTTPRequestOperation?, any Error) -> Void

    struct Settings {
        var requestSerializer = AFHTTPRequestSerializer.serializer() as AFHTTPRequestSerializer
        var responseSerializer = AFJSONResponseSerializer.serializer() as AFHTTPResponseSerializer
        var securityPolicy = AFSecurityPolicy.default()
        var retryPolicy: RetryPolicy?
        var credential: URLCredential?
        var completionQueue: DispatchQueue?
        var resumesInterruptedUploads = false
        var maximumUploadResumptions = 3
    }

    /// The URL relative paths are resolved against; a non-empty path always ends in `/`.
    public let baseURL: URL?
    /// What sends the operations (a FormDataKit addition).
    public let transport: any FormDataTransport
    /// Where the manager's operations run.
    public let operationQueue = OperationQueue()
    let settings = Locked(Settings())
    /// The last URL string parsed (``AFURLParseMemo``).
    let urlParses = AFURLParseMemo()

    /// A manager with no base URL (AF 2's `+manager`).
    /// - Returns: a new manager.
    public class func manager() -> Self { Self.init(baseURL: nil, transport: FormDataRequest.defaultTransport) }

    /// A manager for `baseURL`, sending through `FormDataRequest.defaultTransport`.
    /// - Parameter baseURL: the URL relative paths are resolved against; nil for none.
    public convenience init(baseURL: URL?) {
        self.init(baseURL: baseURL, transport: FormDataRequest.defaultTransport)
    }

    /// A manager for `baseURL` sending through `transport`.
    /// - Parameters:
    ///   - baseURL: the URL relative paths are resolved against; nil for none.
    ///   - transport: what sends the operations.
    public required init(baseURL: URL?, transport: any FormDataTransport) {
        self.baseURL = baseURL.map(AFHTTPSessionManager.normalizedBaseURL)
        self.transport = transport
    }

    /// Builds requests; an ``AFHTTPRequestSerializer`` by default.
    public var requestSerializer: AFHTTPRequestSerializer {
        get { settings.withLock { $0.requestSerializer } }
        set { settings.withLock { $0.requestSerializer = newValue } }
    }

    /// Decodes responses; an ``AFJSONResponseSerializer`` by default (AF 2's).
    public var responseSerializer: AFHTTPResponseSerializer {
        get { settings.withLock { $0.responseSerializer } }
        set { settings.withLock { $0.responseSerializer = newValue } }
    }

    /// The TLS checks every operation gets.
    public var securityPolicy: AFSecurityPolicy {
        get { settings.withLock { $0.securityPolicy } }
        set { settings.withLock { $0.securityPolicy = newValue } }
    }

    /// Credentials every operation answers authentication challenges with.
    public var credential: URLCredential? {
        get { settings.withLock { $0.credential } }
        set { settings.withLock { $0.credential = newValue } }
    }

    /// Where success and failure run; nil: a global queue.
    public var completionQueue: DispatchQueue? {
        get { settings.withLock { $0.completionQueue } }
        set { settings.withLock { $0.completionQueue = newValue } }
    }

    /// An operation for `request` with the manager's response serializer, security policy,
    /// credential and completion queue, and `success`/`failure` set; not started.
    /// - Parameters:
    ///   - request: the request.
    ///   - success: called with the operation and the response object.
    ///   - failure: called with the operation and the error.
    /// - Returns: the operation.
    open func httpRequestOperation(with request: URLRequest, success: Success?, failure: Failure?) -> AFHTTPRequestOperation {
        let current = settings.current
        let operation = AFHTTPRequestOperation(request: request, transport: transport)
        operation.responseSerializer = current.responseSerializer
        operation.securityPolicy = current.securityPolicy
        operation.retryPolicy = current.retryPolicy
        operation.shouldResumeInterruptedUploads = current.resumesInterruptedUploads
        operation.numberOfTimesToResumeUpload = current.maximumUploadResumptions
        operation.credential = current.credential
        operation.completionQueue = current.completionQueue
        var onFailure: AFHTTPRequestOperation.Failure?
        if let failure { onFailure = { operation, error in failure(operation, error) } }
        operation.setCompletionBlockWithSuccess(success, failure: onFailure)
        return operation
    }

    // MARK: - Verbs

    /// A GET, queued on ``operationQueue``.
    /// - Parameters:
    ///   - urlString: resolved against ``baseURL``.
    ///   - parameters: query parameters; nil for none.
    ///   - success: called with the operation and the response object.
    ///   - failure: called with the operation (nil when the request could not be built) and the error.
    /// - Returns: the queued operation, or nil when the request could not be built.
    @discardableResult
    public func get(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPRequestOperation? {
        enqueue("GET", urlString, parameters, success: success, failure: failure)
    }

    /// A HEAD, queued; `success` gets only the operation.
    /// - Parameters:
    ///   - urlString: resolved against ``baseURL``.
    ///   - parameters: query parameters; nil for none.
    ///   - success: called with the operation.
    ///   - failure: called with the operation (nil when the request could not be built) and the error.
    /// - Returns: the queued operation, or nil when the request could not be built.
    @discardableResult
    public func head(
        _ urlString: String, parameters: Any?, success: (@Sendable (AFHTTPRequestOperation) -> Void)?, failure: Failure?
    ) -> AFHTTPRequestOperation? {
        var onSuccess: Success?
        if let success { onSuccess = { operation, _ in success(operation) } }
        return enqueue("HEAD", urlString, parameters, success: onSuccess, failure: failure)
    }

    /// A POST of `parameters` as ``requestSerializer`` serializes them, queued.
    /// - Parameters:
    ///   - urlString: resolved against ``baseURL``.
    ///   - parameters: the parameters; nil for none.
    ///   - success: called with the operation and the response object.
    ///   - failure: called with the operation (nil when the request could not be built) and the error.
    /// - Returns: the queued operation, or nil when the request could not be built.
    @discardableResult
    public func post(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPRequestOperation? {
        enqueue("POST", urlString, parameters, success: success, failure: failure)
    }

    /// A multipart POST: `parameters` as fields, then the parts `block` appends; queued.
    /// - Parameters:
    ///   - urlString: resolved against ``baseURL``.
    ///   - parameters: form fields, first in the body; nil for none.
    ///   - block: appends the parts; nil for none.
    ///   - success: called with the operation and the response object.
    ///   - failure: called with the operation (nil when the request could not be built) and the error.
    /// - Returns: the queued operation, or nil when the request could not be built.
    @discardableResult
    public func post(
        _ urlString: String, parameters: [String: Any]?, constructingBodyWith block: ((any AFMultipartFormData) throws -> Void)?,
        success: Success?, failure: Failure?
    ) -> AFHTTPRequestOperation? {
        let request = build(urlString, failure: failure) { resolved in
            try self.requestSerializer.multipartFormRequest(
                withMethod: "POST", urlString: resolved, parameters: parameters, constructingBodyWith: block)
        }
        return request.map { queue(httpRequestOperation(with: $0, success: success, failure: failure)) }
    }

    /// A PUT, queued.
    /// - Parameters:
    ///   - urlString: resolved against ``baseURL``.
    ///   - parameters: the parameters; nil for none.
    ///   - success: called with the operation and the response object.
    ///   - failure: called with the operation (nil when the request could not be built) and the error.
    /// - Returns: the queued operation, or nil when the request could not be built.
    @discardableResult
    public func put(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPRequestOperation? {
        enqueue("PUT", urlString, parameters, success: success, failure: failure)
    }

    /// A PATCH, queued.
    /// - Parameters:
    ///   - urlString: resolved against ``baseURL``.
    ///   - parameters: the parameters; nil for none.
    ///   - success: called with the operation and the response object.
    ///   - failure: called with the operation (nil when the request could not be built) and the error.
    /// - Returns: the queued operation, or nil when the request could not be built.
    @discardableResult
    public func patch(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPRequestOperation? {
        enqueue("PATCH", urlString, parameters, success: success, failure: failure)
    }

    /// A DELETE (parameters in the query by default), queued.
    /// - Parameters:
    ///   - urlString: resolved against ``baseURL``.
    ///   - parameters: query parameters; nil for none.
    ///   - success: called with the operation and the response object.
    ///   - failure: called with the operation (nil when the request could not be built) and the error.
    /// - Returns: the queued operation, or nil when the request could not be built.
    @discardableResult
    public func delete(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPRequestOperation? {
        enqueue("DELETE", urlString, parameters, success: success, failure: failure)
    }

    // MARK: - Building

    /// `urlString` resolved against ``baseURL`` as `NSURL(string:relativeTo:)` resolves it, or nil
    /// when it is not a URL.
    /// - Parameter urlString: an absolute or relative URL string.
    /// - Returns: the absolute URL string, or nil.
    public func resolvedURLString(_ urlString: String) -> String? {
        urlParses.url(urlString, relativeTo: baseURL)?.absoluteString
    }

    private func enqueue(_ method: String, _ urlString: String, _ parameters: Any?, success: Success?, failure: Failure?)
        -> AFHTTPRequestOperation?
    {
        let request = build(urlString, failure: failure) { resolved in
            try self.requestSerializer.request(withMethod: method, urlString: resolved, parameters: parameters)
        }
        return request.map { queue(httpRequestOperation(with: $0, success: success, failure: failure)) }
    }

    /// Resolves the URL and builds the request; a failure goes to `failure` (nil operation) on
    /// the completion queue and gives nil.
    private func build(_ urlString: String, failure: Failure?, _ make: (String) throws -> URLRequest) -> URLRequest? {
        do {
            guard let resolved = resolvedURLString(urlString) else { throw AFURLRequestSerializationError.invalidURLString(urlString) }
            return try make(resolved)
        } catch {
            if let failure { (completionQueue ?? DispatchQueue.sharedGlobal).async { failure(nil, error) } }
            return nil
        }
    }

    private func queue(_ operation: AFHTTPRequestOperation) -> AFHTTPRequestOperation {
        operationQueue.addOperation(operation)
        return operation
    }
}
