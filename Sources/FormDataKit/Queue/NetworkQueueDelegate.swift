import Foundation

/// Hears what happens in a ``NetworkQueue`` — ASINetworkQueue's delegate selectors
/// (`requestDidStartSelector`, `requestDidReceiveResponseHeadersSelector`,
/// `requestDidFinishSelector`, `requestDidFailSelector`, `queueDidFinishSelector`) as methods,
/// all optional. ``NetworkQueue/delegateCalls`` says which of them the queue calls (ASI called
/// only those whose selector was set).
///
/// For each moment of a request, the request's own delegate and block are called first, then
/// the queue's delegate (ASIHTTPRequest's order). The queue's calls come one at a time, in the
/// order the queue saw them, on the queue's own serial mailbox (the shared global queue, never a
/// transport's thread); hop to the main actor yourself to touch UI. Held weakly.
public protocol NetworkQueueDelegate: AnyObject, Sendable {
    /// A request of the queue started.
    func requestStarted(_ request: FormDataRequest)
    /// A request's response head arrived.
    func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String])
    /// A request finished with a response (any status).
    func requestFinished(_ request: FormDataRequest)
    /// A request failed (cancelled ones too, with `FormDataError.cancelled`).
    func requestFailed(_ request: FormDataRequest)
    /// Every request added has finished or failed.
    func queueFinished(_ queue: NetworkQueue)
}

extension NetworkQueueDelegate {
    /// Does nothing.
    /// - Parameter request: the request.
    public func requestStarted(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameters:
    ///   - request: the request.
    ///   - responseHeaders: its response's headers.
    public func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String]) {}
    /// Does nothing.
    /// - Parameter request: the request.
    public func requestFinished(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameter request: the request.
    public func requestFailed(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameter queue: the queue.
    public func queueFinished(_ queue: NetworkQueue) {}
}

/// One class as both a request's and its queue's delegate (a common ASIHTTPRequest pattern): the
/// methods the two protocols share get one empty default, so such a class compiles and implements
/// only what it needs. One method then answers both: set ``NetworkQueue/delegateCalls`` to what
/// the ported code's queue selectors named, or it hears a request's moments twice.
extension NetworkQueueDelegate where Self: FormDataRequestDelegate {
    /// Does nothing.
    /// - Parameter request: the request.
    public func requestStarted(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameters:
    ///   - request: the request.
    ///   - responseHeaders: its response's headers.
    public func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String]) {}
    /// Does nothing.
    /// - Parameter request: the request.
    public func requestFinished(_ request: FormDataRequest) {}
    /// Does nothing.
    /// - Parameter request: the request.
    public func requestFailed(_ request: FormDataRequest) {}
}

/// What happens in a ``NetworkQueue``, as ``NetworkQueue/events`` delivers it: the delegate's
/// calls, in the same order.
public enum NetworkQueueEvent: Sendable {
    /// A request started.
    case requestStarted(FormDataRequest)
    /// A request's response head arrived.
    case receivedResponseHeaders(FormDataRequest, [String: String])
    /// A request finished with a response.
    case requestFinished(FormDataRequest)
    /// A request failed, with why.
    case requestFailed(FormDataRequest, FormDataError)
    /// Every request added has ended.
    case queueFinished
}
