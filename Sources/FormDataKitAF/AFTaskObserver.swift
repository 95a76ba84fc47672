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

/// Receives the transport's reports for one task: updates its progress, decodes the response
/// with the response serializer, removes the spooled body, and calls success or failure once.
final class AFTaskObserver: TransportObserver, @unchecked Sendable {
    private let task: AFHTTPSessionDataTask
    private let handlers: AFTaskHandlers
    private let responseSerializer: AFHTTPResponseSerializer
    private let completionQueue: DispatchQueue
    private let uploadProgress = Progress(totalUnitCount: 0)
    private let downloadProgress = Progress(totalUnitCount: 0)
    private let spooled = Locked<TemporaryFile?>(nil)

    init(
        task: AFHTTPSessionDataTask, handlers: AFTaskHandlers, responseSerializer: AFHTTPResponseSerializer, completionQueue: DispatchQueue
    ) {
        self.task = task
        self.handlers = handlers
        self.responseSerializer = responseSerializer
        self.completionQueue = completionQueue
    }

    /// Keeps `file` (the spooled body) until the task ends.
    func keep(_ file: TemporaryFile?) {
        spooled.withLock { $0 = file }
    }

    func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64) {
        uploadProgress.totalUnitCount = totalBytesExpected > 0 ? totalBytesExpected : totalBytesSent
        uploadProgress.completedUnitCount = totalBytesSent
        handlers.uploadProgress?(uploadProgress)
    }

    func transportDidReceiveResponse(_ head: TransportResponseHead) {}

    func transportDidComplete(_ result: Result<FormDataResponse, FormDataError>) {
        spooled.withLock {
            $0?.remove()
            $0 = nil
        }
        switch result {
        case .failure(let error):
            fail(error)
        case .success(let response):
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
    }

    /// Ends the task with `error` (the body could not be prepared, or sending failed).
    /// A sending failure (or a cancel) reaches AF code as an ``AFNetworkError`` (`NSURLErrorDomain`),
    /// whichever transport sent the request; other errors as they are.
    func fail(_ error: any Error) {
        let error: any Error = (error as? FormDataError).flatMap(AFNetworkError.init) ?? error
        spooled.withLock {
            $0?.remove()
            $0 = nil
        }
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
