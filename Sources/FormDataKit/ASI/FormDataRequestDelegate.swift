import Foundation

/// Receives a ``FormDataRequest``'s lifecycle events, as ASIHTTPRequest's `ASIHTTPRequestDelegate`
/// did. Every method is optional (the protocol extension provides empty ones).
///
/// Order for one send: ``requestStarted(_:)``, then ``request(_:didSendBytes:)`` as the body goes
/// out, then ``request(_:didReceiveResponseHeaders:)``, then exactly one of ``requestFinished(_:)``
/// or ``requestFailed(_:)``. A build failure calls only ``requestFailed(_:)``.
///
/// The calls come on a private serial queue of the request (never the main thread), one at a
/// time, in that order; hop to the main actor yourself to touch UI. The delegate is held weakly.
/// ``FormDataRequest/startSynchronous()`` returns after the last call has returned.
public protocol FormDataRequestDelegate: AnyObject, Sendable {
    /// The body is built and the request is about to be sent.
    func requestStarted(_ request: FormDataRequest)
    /// The response head arrived; `responseHeaders` are its header fields.
    func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String])
    /// The request completed with a response (any status code, 404 and 500 included).
    func requestFinished(_ request: FormDataRequest)
    /// The request failed; ``FormDataRequest/error`` says why.
    func requestFailed(_ request: FormDataRequest)
    /// `bytes` more body bytes were sent (negative when a retry resets the count, as in ASI).
    func request(_ request: FormDataRequest, didSendBytes bytes: Int64)
}

extension FormDataRequestDelegate {
    /// Does nothing.
    /// - Parameter request: the request that started.
    public func requestStarted(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameters:
    ///   - request: the request.
    ///   - responseHeaders: the response's headers.
    public func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String]) {}
    /// Does nothing.
    /// - Parameter request: the request that finished.
    public func requestFinished(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameter request: the request that failed.
    public func requestFailed(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameters:
    ///   - request: the request.
    ///   - bytes: the bytes just sent (negative when a retry starts the body again).
    public func request(_ request: FormDataRequest, didSendBytes bytes: Int64) {}
}
