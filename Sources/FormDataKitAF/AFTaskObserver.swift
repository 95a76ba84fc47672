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

/// Receives the send driver's events for one task: updates its progress, decodes the response
/// with the response serializer, and calls success or failure once. (The driver removes the
/// task's temporary body file when the send ends.)
final class AFTaskObserver: @unchecked Sendable {
    // `@unchecked`: the Progress objects are touched only from the driver's events, one at a time.
    private let task: AFHTTPSessionDataTask
    private let handlers: AFTaskHandlers
    private let responseSerializer: AFHTTPResponseSerializer
    private let completionQueue: DispatchQueue
    private let uploadProgress = Progress(totalUnitCount: 0)
    private let downloadProgress = Progress(totalUnitCount: 0)
    private let sentSoFar = Locked<Int64>(0)

    init(
        task: AFHTTPSessionDataTask, handlers: AFTaskHandlers, responseSerializer: AFHTTPResponseSerializer, completionQueue: DispatchQueue
    ) {
        self.task = task
        self.handlers = handlers
        self.responseSerializer = responseSerializer
        self.completionQueue = completionQueue
    }

    /// The task's events, in order, on the global queue (the driver's arrive on a transport's
    /// thread; progress handlers and the response serializer are the caller's code).
    private let events = SerialMailbox()

    /// One event of the task's send (in order, one at a time); `bodyLength`: the body's size.
    func handle(_ event: SendDriver.Event, bodyLength: UInt64) {
        events.post { [self] in handleHere(event, bodyLength: bodyLength) }
    }

    private func handleHere(_ event: SendDriver.Event, bodyLength: UInt64) {
        switch event {
        case .progress(let delta):
            let total = sentSoFar.withLock { sent -> Int64 in
                sent = max(0, delta < 0 ? 0 : sent + delta)
                return sent
            }
            uploadProgress.totalUnitCount = bodyLength > 0 ? Int64(clamping: bodyLength) : total
            uploadProgress.completedUnitCount = total
            handlers.uploadProgress?(uploadProgress)
        case .retrying, .responseHead:
            break
        case .finished(.failure(let error), _):
            fail(error)
        case .finished(.success(let response), _):
            complete(with: response)
        }
    }

    private func complete(with response: FormDataResponse) {
        let url = task.originalRequest.url ?? URL(fileURLWithPath: "/")
        let http = HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: response.headers)
        let count = Int64(response.body.count)
        downloadProgress.totalUnitCount = count
        downloadProgress.completedUnitCount = count
        handlers.downloadProgress?(downloadProgress)
        do {
            let object = ResponseObject(value: try responseSerializer.responseObject(for: http, data: response.body))
            task.complete(response: http, error: nil)
            deliver { [task, handlers] in handlers.success?(task, object.value) }
        } catch {
            task.complete(response: http, error: error)
            deliver { [task, handlers] in handlers.failure?(task, error) }
        }
    }

    /// Ends the task with `error` (the body could not be prepared, or sending failed).
    /// A sending failure (or a cancel) reaches AF code as an ``AFNetworkError`` (`NSURLErrorDomain`),
    /// whichever transport sent the request; other errors as they are.
    func fail(_ error: any Error) {
        let error: any Error = (error as? FormDataError).flatMap(AFNetworkError.init) ?? error
        task.complete(response: nil, error: error)
        deliver { [task, handlers] in handlers.failure?(task, error) }
    }

    /// A decoded response object on its way to the success callback. `@unchecked`: it was just
    /// made by the response serializer and is handed over, not shared.
    private struct ResponseObject: @unchecked Sendable {
        let value: Any?
    }

    private func deliver(_ body: @escaping @Sendable () -> Void) {
        completionQueue.async(execute: body)
    }
}
