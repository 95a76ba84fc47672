import FormDataKitBody
import FormDataKitEngine
import FormDataKitWire
import Foundation

/// What a queue holding a ``FormDataRequest`` hears of its send (``NetworkQueue``): each call
/// comes after the request's own delegate method and block for the same moment, in the same
/// order, as ASIHTTPRequest called its queue last.
protocol RequestQueueObserver: AnyObject, Sendable {
    /// The request started (after its delegate's `requestStarted` and its `startedBlock`).
    func requestStarted(_ request: FormDataRequest, id: Int)
    /// The response head arrived; `expectedLength`: its Content-Length.
    func request(_ request: FormDataRequest, id: Int, didReceiveResponseHeaders headers: [String: String], expectedLength: UInt64?)
    /// The current attempt has sent `sent` bytes of the `length`-byte body.
    func request(_ request: FormDataRequest, id: Int, sent: UInt64, of length: UInt64)
    /// The current response has brought `received` body bytes.
    func request(_ request: FormDataRequest, id: Int, received: UInt64)
    /// The send ended (after the delegate's `requestFinished`/`requestFailed` and the block).
    func request(_ request: FormDataRequest, id: Int, endedWith error: FormDataError?)
    /// The request's own ``FormDataRequest/cancel()`` while it waits in the queue unstarted.
    func cancelWaiting(_ request: FormDataRequest, id: Int)
}
