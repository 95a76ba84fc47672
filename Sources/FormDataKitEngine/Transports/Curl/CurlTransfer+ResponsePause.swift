import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

// The download side of a transfer's pause (``ResponseDemand``), on the event loop's thread.
extension CurlTransfer {
    /// Passes response body bytes on (already decoded when the response was content-encoded),
    /// unless their consumer is behind: then the transfer pauses receiving, this transfer only,
    /// and libcurl keeps these bytes and hands them over again when ``resumeReceiving()`` unpauses it.
    func receiveBody(_ bytes: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        if let demand = send.responseDemand, demand.isWithheld, demand.pausesReceiving(resumingWith: resumeReceivingAction(demand)) {
            pausedForResponse = true
            return CurlCallbackValue.writePause
        }
        send.transferReceivedBody(UnsafeRawBufferPointer(start: bytes, count: count))
        return count
    }

    /// The command that resumes this transfer's receiving (made once).
    private func resumeReceivingAction(_ demand: ResponseDemand) -> @Sendable () -> Void {
        if let resumeReceivingCommand { return resumeReceivingCommand }
        let key = easy.map { UInt(bitPattern: $0) } ?? 0
        let command: @Sendable () -> Void = { [weak loop = send.transport.eventLoop] in loop?.resumeReceiving(easy: key) }
        resumeReceivingCommand = command
        return command
    }

    /// The response's consumer caught up (a command on the event loop's thread): unpauses
    /// receiving if this transfer paused for it; libcurl hands the kept bytes over again, maybe
    /// before this returns (the write callback asks the demand again, and may pause again).
    func resumeReceiving() {
        guard pausedForResponse, let easy else { return }
        pausedForResponse = false
        _ = ccurl_easy_pause(easy, pauseBits)
    }

    /// The directions that stay paused: sending while the body's read-ahead is empty,
    /// receiving while the response's consumer is behind.
    var pauseBits: Int32 {
        (pausedForBody ? CurlCallbackValue.pauseSend : 0) | (pausedForResponse ? CurlCallbackValue.pauseReceive : 0)
    }
}
