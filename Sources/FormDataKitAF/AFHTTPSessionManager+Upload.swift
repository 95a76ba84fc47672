import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AFNetworking 3's upload task for a request that carries its own body (AFURLSessionManager's
/// `uploadTaskWithStreamedRequest:progress:completionHandler:`), sent like every other task of
/// the manager.
extension AFHTTPSessionManager {
    /// Called once when an upload task ends: the response (nil when none arrived), the response
    /// object ``responseSerializer`` made (nil on failure) and the error (nil on success).
    public typealias UploadCompletionHandler = @Sendable (URLResponse?, Any?, (any Error)?) -> Void

    /// A task that sends `request` as it is, body included (AFNetworking 3's
    /// `uploadTaskWithStreamedRequest:progress:completionHandler:`). The task is **not** started:
    /// call ``AFHTTPSessionDataTask/resume()``, as with AFNetworking.
    ///
    /// ```swift
    /// let request = try manager.requestSerializer.multipartFormRequest(
    ///     withMethod: "POST", urlString: "https://example.com/upload", parameters: ["a": "1"]
    /// ) { form in try form.appendPart(withFileURL: photoURL, name: "photo") }
    /// manager.uploadTask(withStreamedRequest: request, progress: nil) { response, object, error in
    ///     print(error ?? object ?? "")
    /// }.resume()
    /// ```
    ///
    /// A body stream built by
    /// ``AFHTTPRequestSerializer/multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)``
    /// goes out with the bytes the serializer wrote (those
    /// ``AFHTTPRequestSerializer/request(withMultipartForm:writingStreamContentsToFile:completionHandler:)``
    /// writes) and their exact `Content-Length`, never chunked: streamed from its parts by a
    /// transport that streams (`CurlTransport`, the Linux default), else from memory or a
    /// temporary file, as for ``post(_:parameters:headers:constructingBodyWith:progress:success:failure:)``.
    /// Another body stream is read whole before sending; `httpBody` is sent as it is. The URL is
    /// used as it is (not resolved against ``baseURL``); the session configuration's
    /// `httpAdditionalHeaders`, a `User-Agent` when the request has none, ``securityPolicy``,
    /// the retry and resumable-upload settings apply as to every task. Progress runs on the
    /// transport's queue; `completionHandler` on ``completionQueue`` (a global queue when nil)
    /// with the response, the response object and nil — or, when sending failed or the task was
    /// cancelled, an ``AFNetworkError`` (`NSURLErrorDomain`), and when the response serializer
    /// refused the answer, the response and its error (no object).
    /// - Parameters:
    ///   - request: the request to send, with its body (an ``AFMultipartBodyStream`` from the serializer).
    ///   - uploadProgress: told of the upload's progress, nil for none.
    ///   - completionHandler: called once the task ended, nil for none.
    /// - Returns: the task, not started.
    public func uploadTask(
        withStreamedRequest request: URLRequest, progress uploadProgress: ProgressHandler?,
        completionHandler: UploadCompletionHandler?
    ) -> AFHTTPSessionDataTask {
        var success: Success?
        var failure: Failure?
        if let completionHandler {
            success = { task, object in completionHandler(task.response, object, nil) }
            failure = { task, error in completionHandler(task?.response, nil, error) }
        }
        return makeTask(request, uploadProgress: uploadProgress, downloadProgress: nil, success: success, failure: failure)
    }
}
