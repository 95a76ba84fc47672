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
        let handlers = AFTaskHandlers(
            uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure)
        return AFHTTPSessionDataTask(
            request: request,
            starter: { [self] task in send(task, handlers: handlers) },
            canceller: { [self] task in observer(for: task, handlers: handlers).fail(FormDataError.cancelled) })
    }

    func observer(for task: AFHTTPSessionDataTask, handlers: AFTaskHandlers) -> AFTaskObserver {
        let current = settings.current
        return AFTaskObserver(
            task: task, handlers: handlers, responseSerializer: current.responseSerializer,
            completionQueue: current.completionQueue ?? DispatchQueue.sharedGlobal)
    }

    func send(_ task: AFHTTPSessionDataTask, handlers: AFTaskHandlers) {
        let observer = observer(for: task, handlers: handlers)
        let prepared: AFPreparedRequest
        do {
            prepared = try AFPreparedRequest(
                task.originalRequest, additionalHeaders: sessionConfiguration.httpAdditionalHeaders,
                for: transport,
                compressing: requestSerializer.shouldCompressRequestBody)
        } catch {
            observer.fail(error)
            return
        }
        var request = prepared.request
        // URLSession's whole-task limit (7 days unless changed), as Apple's sessions apply it.
        request.totalTimeoutInterval = sessionConfiguration.timeoutIntervalForResource
        let current = settings.current
        request.network.resumesInterruptedUploads = current.resumesInterruptedUploads
        request.network.maximumUploadResumptions = current.maximumUploadResumptions
        do {
            try applySecurityPolicy(to: &request)
        } catch {
            prepared.spooledBody?.remove()
            observer.fail(error)
            return
        }
        let bodyLength = request.body.length
        // The driver owns the spooled (or compressed) body file and removes it when the send ends.
        let driver = SendDriver(request: request, transport: transport, bodyFile: prepared.spooledBody, retryPolicy: retryPolicy) { event in
            observer.handle(event, bodyLength: bodyLength)
        }
        task.attach(driver)
        driver.start()
    }

    /// Puts ``securityPolicy``'s checks into `request` (curl transport); with another transport,
    /// a policy other than the default is an error rather than a request checked differently.
    func applySecurityPolicy(to request: inout TransportRequest) throws {
        try securityPolicy.apply(to: &request, sentBy: transport)
    }
}
