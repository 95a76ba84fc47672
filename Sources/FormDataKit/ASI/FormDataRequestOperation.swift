import Foundation

/// A ``FormDataRequest`` as an `Operation`, for a plain `OperationQueue` (ASIHTTPRequest was an
/// `NSOperation`): the operation executes while the request is sent and finishes after its
/// last callback. Cancelling it cancels the request; an operation cancelled before it started
/// fails its request with `FormDataError.cancelled` without sending it (delegate
/// `requestFailed` and ``FormDataRequest/failedBlock`` are called, as ASI's were).
///
/// ```swift
/// let operations = OperationQueue()
/// operations.addOperation(request)          // or request.makeOperation()
/// ```
public final class FormDataRequestOperation: Operation, @unchecked Sendable {
    // `@unchecked`: `phase` is guarded by its lock; Operation's own state is thread-safe.
    /// The request this operation sends.
    public let request: FormDataRequest
    private let phase = Locked<(executing: Bool, finished: Bool)>((false, false))

    /// An operation that sends `request`.
    /// - Parameter request: the request (not being sent elsewhere).
    public init(request: FormDataRequest) {
        self.request = request
        super.init()
        queuePriority = request.queuePriority
    }

    /// True: the request is sent on the transport's threads, not the operation's.
    public override var isAsynchronous: Bool { true }
    /// Whether the request is being sent.
    public override var isExecuting: Bool { phase.current.executing }
    /// Whether the request has finished or failed and its callbacks have run.
    public override var isFinished: Bool { phase.current.finished }

    /// Sends the request (or, when cancelled first, fails it unsent).
    public override func start() {
        set(executing: true, finished: false)
        let done: @Sendable (Result<FormDataResponse, FormDataError>) -> Void = { [self] _ in
            set(executing: false, finished: true)
        }
        if isCancelled {
            request.send(cancelledFirst: true, done)
        } else {
            request.send(done)
        }
    }

    /// Cancels the operation and its request.
    public override func cancel() {
        super.cancel()
        request.cancel()
    }

    private func set(executing: Bool, finished: Bool) {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        phase.withLock { $0 = (executing, finished) }
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}

extension FormDataRequest {
    /// A new `Operation` that sends this request (see ``FormDataRequestOperation``).
    /// - Returns: the operation, not started.
    public func makeOperation() -> FormDataRequestOperation { FormDataRequestOperation(request: self) }
}

extension OperationQueue {
    /// Adds an operation that sends `request` (ASI code added its requests to queues directly).
    /// - Parameter request: the request.
    public func addOperation(_ request: FormDataRequest) {
        addOperation(request.makeOperation())
    }
}
