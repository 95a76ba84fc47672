import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request an ``AFHTTPSessionManager`` sends (what AFNetworking returned as an
/// `NSURLSessionDataTask`): the request as built, its state, and its response once it arrived.
/// Thread-safe.
public final class AFHTTPSessionDataTask: @unchecked Sendable {
    /// Where a task is in its life.
    public enum State: Sendable, Equatable {
        /// Created, not started (``AFHTTPSessionManager/dataTask(withHTTPMethod:urlString:parameters:headers:uploadProgress:downloadProgress:success:failure:)``
        /// returns tasks in this state; call ``resume()``).
        case suspended
        /// Sending or waiting for the response.
        case running
        /// ``cancel()`` was called; the failure callback will follow.
        case canceling
        /// Finished: a callback has run or is running.
        case completed
    }

    private struct Mutable {
        var state: State = .suspended
        var response: HTTPURLResponse?
        var error: (any Error)?
        /// The task keeps itself alive while it runs (its send holds it weakly).
        var running: AFHTTPSessionDataTask?
    }

    /// The request as the serializer built it, with the per-request headers applied.
    public let originalRequest: URLRequest
    /// A number unique among the tasks of this process.
    public let taskIdentifier: Int

    private let mutable = Locked(Mutable())
    /// The task's send (the façade adapter): it owns the cancel that comes before the start.
    let send: FacadeSend
    private let starter: @Sendable (AFHTTPSessionDataTask) -> Void
    private static let counter = Locked(0)

    /// A task for `request`, sent by `send`; `starter` prepares the request and starts `send` on ``resume()``.
    init(request: URLRequest, send: FacadeSend, starter: @escaping @Sendable (AFHTTPSessionDataTask) -> Void) {
        self.originalRequest = request
        self.taskIdentifier = Self.counter.withLock { value -> Int in
            value += 1
            return value
        }
        self.send = send
        self.starter = starter
    }

    /// The task's state.
    public var state: State { mutable.withLock { $0.state } }

    /// The HTTP response, once it arrived.
    public var response: HTTPURLResponse? { mutable.withLock { $0.response } }

    /// The error the task failed with, once it did.
    public var error: (any Error)? { mutable.withLock { $0.error } }

    /// Starts a suspended task (does nothing otherwise).
    public func resume() {
        let start = mutable.withLock { value -> Bool in
            guard value.state == .suspended else { return false }
            value.state = .running
            value.running = self
            return true
        }
        if start { starter(self) }
    }

    /// Cancels the task: its failure callback runs with `FormDataError.cancelled`. A suspended
    /// task completes at once without sending anything.
    public func cancel() {
        let wasSuspended = mutable.withLock { value -> Bool? in
            switch value.state {
            case .running:
                value.state = .canceling
                return false
            case .suspended:
                value.state = .canceling
                return true
            case .canceling, .completed:
                return nil
            }
        }
        switch wasSuspended {
        case true?: send.end(.cancelled)
        case false?: send.cancel()
        case nil: break
        }
    }

    /// Marks the task completed with `response` and `error`.
    func complete(response: HTTPURLResponse?, error: (any Error)?) {
        mutable.withLock {
            $0.state = .completed
            $0.response = response
            $0.error = error
            $0.running = nil
        }
    }
}
