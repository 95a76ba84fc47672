import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests built by a request serializer and decodes responses with a response
/// serializer, with AFNetworking 4.x's `AFHTTPSessionManager` API: relative paths resolved
/// against ``baseURL`` as `NSURL` resolves them, `get`/`head`/`post`/`put`/`patch`/`delete`
/// with `headers:`, `progress:`, `success:` and `failure:` (and the 3.x shapes without `headers:`).
///
/// ```swift
/// let manager = AFHTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1/"))
/// manager.post("upload", parameters: ["key": "value"], headers: nil, constructingBodyWith: { form in
///     try form.appendPart(withFileURL: URL(fileURLWithPath: "/tmp/photo.jpg"), name: "photo")
/// }, progress: nil, success: { task, response in print(response ?? "") },
///    failure: { task, error in print(error) })
/// ```
///
/// Sending goes through FormDataKit's transport: `FormDataRequest.defaultTransport` unless one is
/// passed to ``init(baseURL:sessionConfiguration:transport:)`` — `CurlTransport` on Linux, which
/// streams multipart bodies from their parts with their exact length (nothing spooled), and
/// `URLSessionTransport` on Apple platforms, where multipart bodies with file parts (or over
/// 1 MiB) are spooled to a private temporary file and uploaded from it (removed when the task
/// ends) and small in-memory ones are sent from memory. `Content-Length` is exact either way.
/// Success and failure callbacks run on ``completionQueue`` when it is set, otherwise on a global
/// queue — never on the main thread by default. Progress callbacks run on the transport's queue.
/// A request without a `User-Agent` (on Linux, where the serializer sets none, every one unless
/// you set it) is sent with `FormDataRequest.defaultUserAgentString`; one that is set is kept.
open class AFHTTPSessionManager: @unchecked Sendable {
    /// Called when a request succeeds, with the task and the decoded response object.
    public typealias Success = @Sendable (AFHTTPSessionDataTask, Any?) -> Void
    /// Called when building, sending or validating a request fails; the task is nil when the
    /// request could not be built.
    public typealias Failure = @Sendable (AFHTTPSessionDataTask?, any Error) -> Void
    /// Called with upload or download progress.
    public typealias ProgressHandler = @Sendable (Progress) -> Void

    struct Settings {
        var requestSerializer: AFHTTPRequestSerializer
        var responseSerializer: AFHTTPResponseSerializer
        var completionQueue: DispatchQueue?
        var securityPolicy = AFSecurityPolicy.default()
        var retryPolicy: RetryPolicy?
        /// Resumable uploads (``AFHTTPSessionManager/shouldResumeInterruptedUploads``).
        var resumesInterruptedUploads = false
        var maximumUploadResumptions = 3
        /// ``AFHTTPSessionManager/httpVersion``.
        var httpVersion = HTTPVersion.automatic
    }

    /// The URL relative paths are resolved against; a non-empty path always ends in `/`.
    public let baseURL: URL?
    /// The session configuration given at creation. Its `httpAdditionalHeaders` are added to
    /// every request that lacks them; the session itself is the transport's.
    public let sessionConfiguration: URLSessionConfiguration
    /// What sends the requests.
    public let transport: any FormDataTransport

    let settings: Locked<Settings>
    /// The last URL string parsed (``AFURLParseMemo``).
    let urlParses = AFURLParseMemo()

    /// A manager with no base URL (AFNetworking's `+manager`).
    /// - Returns: a new manager.
    public class func manager() -> Self {
        Self.init(baseURL: nil, sessionConfiguration: nil, transport: FormDataRequest.defaultTransport)
    }

    /// A manager for `baseURL` (see ``init(baseURL:sessionConfiguration:transport:)``).
    /// - Parameter baseURL: the URL relative request URLs are resolved against; nil for none.
    public convenience init(baseURL: URL?) {
        self.init(baseURL: baseURL, sessionConfiguration: nil)
    }

    /// A manager for `baseURL` with `configuration`, sending through
    /// `FormDataRequest.defaultTransport` (`CurlTransport` on Linux, `URLSessionTransport` on
    /// Apple platforms).
    /// - Parameters:
    ///   - baseURL: the URL relative request URLs are resolved against; nil for none.
    ///   - configuration: its `httpAdditionalHeaders` are added to requests that lack them; nil: `.default`.
    public convenience init(baseURL: URL?, sessionConfiguration configuration: URLSessionConfiguration?) {
        self.init(baseURL: baseURL, sessionConfiguration: configuration, transport: FormDataRequest.defaultTransport)
    }

    /// A manager for `baseURL` that sends through `transport` (a FormDataKit addition). A base URL
    /// with a non-empty path gets a trailing `/` (`http://example.com/v1` →
    /// `http://example.com/v1/`); the request serializer is an ``AFHTTPRequestSerializer``, the
    /// response serializer an ``AFJSONResponseSerializer``.
    /// - Parameters:
    ///   - baseURL: the URL relative request URLs are resolved against; nil for none.
    ///   - configuration: its `httpAdditionalHeaders` are added to requests that lack them; nil: `.default`.
    ///   - transport: what sends the tasks.
    public required init(baseURL: URL?, sessionConfiguration configuration: URLSessionConfiguration?, transport: any FormDataTransport) {
        self.baseURL = baseURL.map(Self.normalizedBaseURL)
        self.sessionConfiguration = configuration ?? .default
        self.transport = transport
        self.settings = Locked(
            Settings(
                requestSerializer: AFHTTPRequestSerializer.serializer(),
                responseSerializer: AFJSONResponseSerializer.serializer(),
                completionQueue: nil))
    }

    /// A manager with the same base URL, configuration, transport and completion queue, and
    /// copies of the serializers.
    /// - Returns: the copy, independent of this manager.
    public func copy() -> Self {
        let copy = Self.init(baseURL: baseURL, sessionConfiguration: sessionConfiguration, transport: transport)
        let current = settings.current
        copy.settings.withLock {
            $0.requestSerializer = current.requestSerializer.copy()
            $0.responseSerializer = current.responseSerializer.copy()
            $0.completionQueue = current.completionQueue
            $0.resumesInterruptedUploads = current.resumesInterruptedUploads
            $0.maximumUploadResumptions = current.maximumUploadResumptions
            $0.httpVersion = current.httpVersion
        }
        return copy
    }

    /// `url` with a trailing slash when its path is non-empty and it does not end in one.
    static func normalizedBaseURL(_ url: URL) -> URL {
        guard !url.path.isEmpty, !url.absoluteString.hasSuffix("/") else { return url }
        // AFNetworking appended an empty path component; Linux NSURL crashes on that, so the
        // slash is added to the path directly (query and fragment stay after it).
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        components.percentEncodedPath += "/"
        return components.url ?? url
    }

    // MARK: - Settings

    /// Builds every request; ``AFHTTPRequestSerializer`` by default.
    public var requestSerializer: AFHTTPRequestSerializer {
        get { settings.withLock { $0.requestSerializer } }
        set { settings.withLock { $0.requestSerializer = newValue } }
    }

    /// Validates and decodes every response; ``AFJSONResponseSerializer`` by default.
    public var responseSerializer: AFHTTPResponseSerializer {
        get { settings.withLock { $0.responseSerializer } }
        set { settings.withLock { $0.responseSerializer = newValue } }
    }

    /// The queue success and failure callbacks run on; nil (the default) runs them on a global
    /// queue (AFNetworking used the main queue).
    public var completionQueue: DispatchQueue? {
        get { settings.withLock { $0.completionQueue } }
        set { settings.withLock { $0.completionQueue = newValue } }
    }

    /// How server certificates are checked (AF's `securityPolicy`; ``AFSecurityPolicy/default()``:
    /// the system's trust). Applied to every request through `CurlTransport` (see
    /// ``AFSecurityPolicy/networkOptions()``). With another transport, a policy other than the
    /// default fails each task with the reason (build an AsyncHTTPClient transport with
    /// ``AFSecurityPolicy/trustAnchorPinning()`` instead).
    public var securityPolicy: AFSecurityPolicy {
        get { settings.withLock { $0.securityPolicy } }
        set { settings.withLock { $0.securityPolicy = newValue } }
    }

    /// `urlString` resolved against ``baseURL`` as `NSURL(string:relativeTo:)` resolves it
    /// (`""` is the base URL itself; `/foo` drops the base path), or nil when it is not a URL.
    /// - Parameter urlString: an absolute or relative URL string.
    /// - Returns: the absolute URL string, or nil.
    public func resolvedURLString(_ urlString: String) -> String? {
        urlParses.url(urlString, relativeTo: baseURL)?.absoluteString
    }

    // MARK: - Requests

    /// A GET request; the task is started.
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: query parameters, nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - downloadProgress: told of the response's progress, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func get(
        _ urlString: String, parameters: Any?, headers: [String: String]?, progress downloadProgress: ProgressHandler?,
        success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        startedTask(
            dataTask(
                withHTTPMethod: "GET", urlString: urlString, parameters: parameters, headers: headers,
                uploadProgress: nil, downloadProgress: downloadProgress, success: success, failure: failure))
    }

    /// A HEAD request; `success` gets only the task. The task is started.
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: query parameters, nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - success: called with the task.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func head(
        _ urlString: String, parameters: Any?, headers: [String: String]?,
        success: (@Sendable (AFHTTPSessionDataTask) -> Void)?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        var onSuccess: Success?
        if let success { onSuccess = { task, _ in success(task) } }
        return startedTask(
            dataTask(
                withHTTPMethod: "HEAD", urlString: urlString, parameters: parameters, headers: headers,
                uploadProgress: nil, downloadProgress: nil, success: onSuccess, failure: failure))
    }

    /// A POST request with the parameters serialized by ``requestSerializer``; the task is started.
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: the parameters, serialized by ``requestSerializer``; nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - uploadProgress: told of the upload's progress, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func post(
        _ urlString: String, parameters: Any?, headers: [String: String]?, progress uploadProgress: ProgressHandler?,
        success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        startedTask(
            dataTask(
                withHTTPMethod: "POST", urlString: urlString, parameters: parameters, headers: headers,
                uploadProgress: uploadProgress, downloadProgress: nil, success: success, failure: failure))
    }

    /// A multipart POST request: `parameters` as form fields, then the parts `block` appends
    /// (see ``AFHTTPRequestSerializer/multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)``).
    /// Per-request `headers` are applied last, so a `Content-Type` among them replaces the
    /// multipart one. Errors from building the body (an append that failed included) go to
    /// `failure` with a nil task, and nil is returned. The task is started.
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: form fields, first in the body; nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - block: appends the parts; nil for none.
    ///   - uploadProgress: told of the upload's progress, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func post(
        _ urlString: String, parameters: [String: Any]?, headers: [String: String]?,
        constructingBodyWith block: ((any AFMultipartFormData) throws -> Void)?, progress uploadProgress: ProgressHandler?,
        success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        let request: URLRequest
        do {
            guard let resolved = resolvedURLString(urlString) else {
                throw AFURLRequestSerializationError.invalidURLString(urlString)
            }
            request = Self.applying(
                headers,
                to: try requestSerializer.multipartFormRequest(
                    withMethod: "POST", urlString: resolved, parameters: parameters, constructingBodyWith: block))
        } catch {
            reportBuildFailure(error, to: failure)
            return nil
        }
        return startedTask(makeTask(request, uploadProgress: uploadProgress, downloadProgress: nil, success: success, failure: failure))
    }

    /// A PUT request; the task is started.
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: the parameters, serialized by ``requestSerializer``; nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func put(
        _ urlString: String, parameters: Any?, headers: [String: String]?, success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        startedTask(
            dataTask(
                withHTTPMethod: "PUT", urlString: urlString, parameters: parameters, headers: headers,
                uploadProgress: nil, downloadProgress: nil, success: success, failure: failure))
    }

    /// A PATCH request; the task is started.
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: the parameters, serialized by ``requestSerializer``; nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func patch(
        _ urlString: String, parameters: Any?, headers: [String: String]?, success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        startedTask(
            dataTask(
                withHTTPMethod: "PATCH", urlString: urlString, parameters: parameters, headers: headers,
                uploadProgress: nil, downloadProgress: nil, success: success, failure: failure))
    }

    /// A DELETE request (parameters go into the query by default); the task is started.
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: query parameters by default, nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func delete(
        _ urlString: String, parameters: Any?, headers: [String: String]?, success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        startedTask(
            dataTask(
                withHTTPMethod: "DELETE", urlString: urlString, parameters: parameters, headers: headers,
                uploadProgress: nil, downloadProgress: nil, success: success, failure: failure))
    }

    /// A `method` request to `urlString` (resolved against ``baseURL``) with `parameters` serialized
    /// by ``requestSerializer`` and `headers` applied last (replacing any value, computed headers
    /// included). The task is **not** started: call ``AFHTTPSessionDataTask/resume()``. When the
    /// request cannot be built, `failure` is called asynchronously with a nil task and the error,
    /// and nil is returned.
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: the parameters, serialized by ``requestSerializer``; nil for none.
    ///   - headers: headers set on this request last, nil for none.
    ///   - uploadProgress: told of the upload's progress, nil for none.
    ///   - downloadProgress: told of the response's progress, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the task, not started; nil when the request could not be built.
    public func dataTask(
        withHTTPMethod method: String, urlString: String, parameters: Any?, headers: [String: String]?,
        uploadProgress: ProgressHandler?, downloadProgress: ProgressHandler?, success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        let request: URLRequest
        do {
            guard let resolved = resolvedURLString(urlString) else {
                throw AFURLRequestSerializationError.invalidURLString(urlString)
            }
            request = Self.applying(
                headers, to: try requestSerializer.request(withMethod: method, urlString: resolved, parameters: parameters))
        } catch {
            reportBuildFailure(error, to: failure)
            return nil
        }
        return makeTask(request, uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure)
    }
}
