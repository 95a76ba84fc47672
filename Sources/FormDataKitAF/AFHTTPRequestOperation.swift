import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``AFURLConnectionOperation`` whose response goes through a response serializer, in
/// AFNetworking 2's `AFHTTPRequestOperation` shape: ``responseObject``, and success/failure
/// blocks set with ``setCompletionBlockWithSuccess(_:failure:)``.
///
/// ```swift
/// let operation = AFHTTPRequestOperation(request: request)
/// operation.responseSerializer = AFJSONResponseSerializer.serializer()
/// operation.setCompletionBlockWithSuccess({ operation, object in print(object ?? "") },
///                                        failure: { operation, error in print(error) })
/// OperationQueue().addOperation(operation)
/// ```
open class AFHTTPRequestOperation: AFURLConnectionOperation, @unchecked Sendable {
    /// Called with the operation and the serialized response object.
    public typealias Success = @Sendable (AFHTTPRequestOperation, Any?) -> Void
    /// Called with the operation and why it failed (sending, or the serializer's validation).
    public typealias Failure = @Sendable (AFHTTPRequestOperation, any Error) -> Void

    private struct Serialized {
        var serializer = AFHTTPResponseSerializer.serializer()
        var done = false
        var object: ResponseObject?
        var error: (any Error)?
    }

    /// A decoded response object kept by the operation. `@unchecked`: made once by the response
    /// serializer and only read after.
    private struct ResponseObject: @unchecked Sendable {
        let value: Any?
    }

    private let serialized = Locked(Serialized())

    /// Decodes and validates the response; an ``AFHTTPResponseSerializer`` by default (AF 2's).
    public var responseSerializer: AFHTTPResponseSerializer {
        get { serialized.withLock { $0.serializer } }
        set { serialized.withLock { $0.serializer = newValue } }
    }

    /// The response object the serializer made, once finished (nil when it failed).
    public var responseObject: Any? {
        serializeOnce()
        return serialized.withLock { $0.object?.value }
    }

    /// The sending error, or the serializer's validation error (an unacceptable status or type).
    open override var error: (any Error)? {
        if let sending = super.error { return sending }
        serializeOnce()
        return serialized.withLock { $0.error }
    }

    /// Sets `completionBlock` to call `success` (with ``responseObject``) or `failure` (with
    /// ``error``) on ``AFURLConnectionOperation/completionQueue`` (a global queue when nil)
    /// once the operation finished. A cancelled operation calls `failure` with `NSURLErrorCancelled`.
    /// - Parameters:
    ///   - success: called when the request succeeded and the serializer accepted the response.
    ///   - failure: called otherwise.
    public func setCompletionBlockWithSuccess(_ success: Success?, failure: Failure?) {
        completionBlock = { [weak self] in
            guard let self else { return }
            let queue = completionQueue ?? DispatchQueue.sharedGlobal
            if let error {
                queue.async { failure?(self, error) }
            } else {
                let object = ResponseObject(value: responseObject)
                queue.async { success?(self, object.value) }
            }
        }
    }

    private func serializeOnce() {
        let (response, data, ended, serializer) = (self.response, self.responseData, isFinished, responseSerializer)
        guard ended, super.error == nil, serialized.withLock({ !$0.done }) else { return }
        var object: ResponseObject?
        var failure: (any Error)?
        do {
            object = ResponseObject(value: try serializer.responseObject(for: response, data: data))
        } catch {
            failure = error
        }
        serialized.withLock {
            guard !$0.done else { return }
            $0.done = true
            $0.object = object
            $0.error = failure
        }
    }
}
