import Foundation

/// AFNetworking 3.x's request methods (no `headers:`), removed in 4.0; kept so 3.x-era code
/// ports line by line. Each is the 4.x method with `headers: nil`.
extension AFHTTPSessionManager {
    /// A GET request without per-request headers (3.x shape).
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: query parameters, nil for none.
    ///   - downloadProgress: told of the response's progress, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func get(
        _ urlString: String, parameters: Any?, progress downloadProgress: ProgressHandler?, success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        get(urlString, parameters: parameters, headers: nil, progress: downloadProgress, success: success, failure: failure)
    }

    /// A HEAD request without per-request headers (3.x shape).
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: query parameters, nil for none.
    ///   - success: called with the task.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func head(
        _ urlString: String, parameters: Any?, success: (@Sendable (AFHTTPSessionDataTask) -> Void)?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        head(urlString, parameters: parameters, headers: nil, success: success, failure: failure)
    }

    /// A POST request without per-request headers (3.x shape).
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: the parameters, serialized by ``requestSerializer``; nil for none.
    ///   - uploadProgress: told of the upload's progress, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func post(
        _ urlString: String, parameters: Any?, progress uploadProgress: ProgressHandler?, success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        post(urlString, parameters: parameters, headers: nil, progress: uploadProgress, success: success, failure: failure)
    }

    /// A multipart POST request without per-request headers (3.x shape).
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: form fields, first in the body; nil for none.
    ///   - block: appends the parts; nil for none.
    ///   - uploadProgress: told of the upload's progress, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func post(
        _ urlString: String, parameters: [String: Any]?, constructingBodyWith block: ((any AFMultipartFormData) throws -> Void)?,
        progress uploadProgress: ProgressHandler?, success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask? {
        post(
            urlString, parameters: parameters, headers: nil, constructingBodyWith: block, progress: uploadProgress,
            success: success, failure: failure)
    }

    /// A PUT request without per-request headers (3.x shape).
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: the parameters, serialized by ``requestSerializer``; nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func put(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPSessionDataTask? {
        put(urlString, parameters: parameters, headers: nil, success: success, failure: failure)
    }

    /// A PATCH request without per-request headers (3.x shape).
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: the parameters, serialized by ``requestSerializer``; nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func patch(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPSessionDataTask? {
        patch(urlString, parameters: parameters, headers: nil, success: success, failure: failure)
    }

    /// A DELETE request without per-request headers (3.x shape).
    /// - Parameters:
    ///   - urlString: the URL, resolved against ``baseURL``.
    ///   - parameters: query parameters, nil for none.
    ///   - success: called with the task and the response object.
    ///   - failure: called with the task (nil when the request could not be built) and the error.
    /// - Returns: the started task, or nil when the request could not be built.
    @discardableResult
    public func delete(_ urlString: String, parameters: Any?, success: Success?, failure: Failure?) -> AFHTTPSessionDataTask? {
        delete(urlString, parameters: parameters, headers: nil, success: success, failure: failure)
    }
}
