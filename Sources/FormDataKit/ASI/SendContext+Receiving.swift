import FormDataKitBody
import FormDataKitEngine
import FormDataKitWire
import Foundation

/// The response side of a send's callbacks: its head and its body as it arrives, reported in
/// ASIHTTPRequest's order (the delegate, the blocks, then the queue).
extension SendContext {
    /// The response head: the download size (when known and not in a queue, which counts it
    /// itself), the delegate, ``FormDataRequest/headersReceivedBlock``, then the queue.
    func reportResponseHead(_ head: TransportResponseHead, callbacks: SendCallbacks, membership: QueueMembership) {
        let delegate = callbacks.delegate.value
        let headersBlock = callbacks.headersReceivedBlock
        let sizeBlock = membership.observer == nil ? callbacks.downloadSizeIncrementedBlock : nil
        let length = head.contentLength
        guard delegate != nil || headersBlock != nil || membership.observer != nil || (sizeBlock != nil && length != nil) else { return }
        let request = self.request
        let headers = head.headers
        deliver(internalOnly: delegate == nil && headersBlock == nil && (sizeBlock == nil || length == nil)) {
            if let length { sizeBlock?(Int64(clamping: length)) }
            delegate?.request(request, didReceiveResponseHeaders: headers)
            headersBlock?(headers)
            membership.observer?.request(request, id: membership.id, didReceiveResponseHeaders: headers, expectedLength: length)
        }
    }

    /// Decoded response body bytes, `received` of this response so far of `expected` (in order
    /// with the send's events): written to the file, handed to ``FormDataRequest/dataReceivedBlock``,
    /// counted for ``FormDataRequest/bytesReceivedBlock`` and the queue.
    func received(_ chunk: Data, received: UInt64, expected: UInt64?) {
        guard let receiving else { return }
        receiving.received(chunk)
        let (dataBlock, bytesBlock, membership) = request.sending.withLock {
            ($0.callbacks.dataReceivedBlock, $0.callbacks.bytesReceivedBlock, $0.queue)
        }
        guard dataBlock != nil || bytesBlock != nil || membership.observer != nil else { return }
        let request = self.request
        let count = UInt64(chunk.count)
        deliver(internalOnly: dataBlock == nil && bytesBlock == nil) {
            dataBlock?(chunk)
            bytesBlock?(count, expected ?? 0)
            membership.observer?.request(request, id: membership.id, received: received)
        }
    }
}
