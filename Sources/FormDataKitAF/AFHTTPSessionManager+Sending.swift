import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sending a manager's tasks: each goes through FormDataKit's send driver (the same as
/// `FormDataRequest`'s), which owns the body's temporary file.
extension AFHTTPSessionManager {
    static func applying(_ headers: [String: String]?, to request: URLRequest) -> URLRequest {
        var result = request
        for (field, value) in headers ?? [:] { result.setValue(value, forHTTPHeaderField: field) }
        return result
    }

    func startedTask(_ task: AFHTTPSessionDataTask?) -> AFHTTPSessionDataTask? {
        task?.resume()
        return task
    }

    func reportBuildFailure(_ error: any Error, to failure: Failure?) {
        guard let failure else { return }
        (completionQueue ?? DispatchQueue.sharedGlobal).async { failure(nil, error) }
    }

    func makeTask(
        _ request: URLRequest, uploadProgress: ProgressHandler?, downloadProgress: ProgressHandler?,
        success: Success?, failure: Failure?
    ) -> AFHTTPSessionDataTask {
        let current = settings.current
        let observer = AFTaskObserver(
            handlers: AFTaskHandlers(
                uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure),
            responseSerializer: current.responseSerializer, completionQueue: current.completionQueue)
        let send = FacadeSend(transport: transport) { event in observer.handle(event) }
        let task = AFHTTPSessionDataTask(request: request, send: send) { [self] task in self.send(task, observer: observer) }
        observer.task = task
        return task
    }

    /// Prepares `task`'s request and starts its send (which owns the spooled or compressed body
    /// file from then on, and the task's cancel, before the start or after).
    func send(_ task: AFHTTPSessionDataTask, observer: AFTaskObserver) {
        let prepared: AFPreparedRequest
        do {
            prepared = try AFPreparedRequest(
                task.originalRequest, additionalHeaders: sessionConfiguration.httpAdditionalHeaders,
                for: transport,
                compressing: requestSerializer.shouldCompressRequestBody)
        } catch {
            return failUnsent(task, observer: observer, error)
        }
        var request = prepared.request
        // URLSession's whole-task limit (7 days unless changed), as Apple's sessions apply it.
        request.totalTimeoutInterval = sessionConfiguration.timeoutIntervalForResource
        let current = settings.current
        request.network.resumesInterruptedUploads = current.resumesInterruptedUploads
        request.network.maximumUploadResumptions = current.maximumUploadResumptions
        request.network.httpVersion = current.httpVersion
        do {
            try applySecurityPolicy(to: &request)
        } catch {
            return failUnsent(task, observer: observer, error, bodyFile: prepared.spooledBody)
        }
        var options = FacadeSend.Options()
        options.retryPolicy = retryPolicy
        task.send.start(request, bodyFile: prepared.spooledBody, options: options)
    }

    /// Ends `task` unsent with a build error (handed over as it is), in its send's order.
    private func failUnsent(_ task: AFHTTPSessionDataTask, observer: AFTaskObserver, _ error: any Error, bodyFile: TemporaryFile? = nil) {
        if task.send.abandon(bodyFile: bodyFile) { task.send.deliver { observer.fail(task, error) } }
    }

    /// Puts ``securityPolicy``'s checks into `request` (curl transport); with another transport,
    /// a policy other than the default is an error rather than a request checked differently.
    func applySecurityPolicy(to request: inout TransportRequest) throws {
        try securityPolicy.apply(to: &request, sentBy: transport)
    }
}
