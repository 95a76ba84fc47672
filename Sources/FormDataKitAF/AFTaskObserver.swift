import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The callbacks of one session-manager task.
struct AFTaskHandlers: Sendable {
    var uploadProgress: AFHTTPSessionManager.ProgressHandler?
    var downloadProgress: AFHTTPSessionManager.ProgressHandler?
    var success: AFHTTPSessionManager.Success?
    var failure: AFHTTPSessionManager.Failure?
}

/// Receives the events of one task's send (the façade adapter's): updates its progress, decodes
/// the response with the response serializer, and calls success or failure once. The progress
/// handlers and the serializer run in the send's ordered callbacks (on a global queue), success
/// and failure on the completion queue after them, or right after them without one. (The send removes the task's temporary body file when it ends.)
final class AFTaskObserver: @unchecked Sendable {
    // `@unchecked`: the Progress objects are touched only in the send's ordered callbacks, one
    // at a time; `task` is set once, before the send can start.
    private let handlers: AFTaskHandlers
    private let responseSerializer: AFHTTPResponseSerializer
    private let completionQueue: DispatchQueue?
    private let uploadProgress = Progress(totalUnitCount: 0)
    private let downloadProgress = Progress(totalUnitCount: 0)
    /// The task (weakly: it keeps itself alive while it runs, and holds its send, which holds this).
    weak var task: AFHTTPSessionDataTask?

    init(handlers: AFTaskHandlers, responseSerializer: AFHTTPResponseSerializer, completionQueue: DispatchQueue?) {
        self.handlers = handlers
        self.responseSerializer = responseSerializer
        self.completionQueue = completionQueue
    }

    /// One event of the task's send (in order, one at a time): handled in the send's callbacks.
    func handle(_ event: FacadeSend.Event) {
        guard let task else { return }
        let send = task.send
        switch event {
        case .uploadProgress(let progress):
            guard handlers.uploadProgress != nil else { return }
            send.deliver { [self] in
                uploadProgress.totalUnitCount = progress.total > 0 ? Int64(clamping: progress.total) : Int64(clamping: progress.sent)
                uploadProgress.completedUnitCount = Int64(clamping: progress.sent)
                handlers.uploadProgress?(uploadProgress)
            }
        case .retrying, .responseHead, .responseBody:
            break
        case .finished(.failure(let error)):
            send.deliver { [self] in fail(task, error) }
        case .finished(.success(let response)):
            let http = send.httpResponse
            send.deliver { [self] in complete(task, with: response, http: http) }
        }
    }

    private func complete(_ task: AFHTTPSessionDataTask, with response: FormDataResponse, http: HTTPURLResponse?) {
        let count = Int64(response.body.count)
        downloadProgress.totalUnitCount = count
        downloadProgress.completedUnitCount = count
        handlers.downloadProgress?(downloadProgress)
        do {
            let object = ResponseObject(value: try responseSerializer.responseObject(for: http, data: response.body))
            task.complete(response: http, error: nil)
            callBack { [handlers] in handlers.success?(task, object.value) }
        } catch {
            task.complete(response: http, error: error)
            callBack { [handlers] in handlers.failure?(task, error) }
        }
    }

    /// Ends the task with `error`: a build error as it is, a sending failure or a cancel as an
    /// ``AFNetworkError`` (`NSURLErrorDomain`), whichever transport sent the request.
    func fail(_ task: AFHTTPSessionDataTask, _ error: any Error) {
        let error = AFNetworkError.reported(error)
        task.complete(response: nil, error: error)
        callBack { [handlers] in handlers.failure?(task, error) }
    }

    /// A decoded response object on its way to the success callback. `@unchecked`: it was just
    /// made by the response serializer and is handed over, not shared.
    /// Runs a success or failure block on the completion queue; without one, right here: the
    /// send's callbacks already run on a global queue, so no second hop to another.
    private func callBack(_ block: @escaping @Sendable () -> Void) {
        if let completionQueue { completionQueue.async(execute: block) } else { block() }
    }

    private struct ResponseObject: @unchecked Sendable {
        let value: Any?
    }
}
