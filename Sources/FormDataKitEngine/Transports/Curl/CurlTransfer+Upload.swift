import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

// The upload side of a transfer: the read-ahead that feeds libcurl's read callback.
extension CurlTransfer {
    /// Starts reading `source` ahead on the reader pool, in chunks of `chunkSize` bytes
    /// (``BodyReadAhead``). When bytes arrive for a paused transfer, the event loop resumes it on
    /// its own thread.
    func startReadAhead(of source: BodySource, chunkSize: Int, easy: UnsafeMutableRawPointer) {
        let key = UInt(bitPattern: easy)
        let made = BodyReadAhead(source: source, chunkSize: chunkSize, files: send.transport.files) {
            [weak loop = send.transport.eventLoop] readAhead in
            loop?.resume(easy: key, readAhead: readAhead)
        }
        readAhead = made
        made.prefetch()
    }

    /// Copies what the read-ahead has into libcurl's upload buffer; pauses the transfer when it
    /// has nothing yet (``resumeBody(readAhead:)`` continues it).
    func readBody(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard let readAhead else { return 0 }
        switch readAhead.read(into: UnsafeMutableRawPointer(buffer), capacity: capacity) {
        case .bytes(let count):
            bodyBytesHandedOut += Int64(count)
            return count
        case .end:
            return 0
        case .wouldBlock:
            pausedForBody = true
            return CurlCallbackValue.readPause
        case .failed(let error):
            bodyError = error
            return CurlCallbackValue.readAbort
        }
    }

    /// The read-ahead `readAhead` has bytes again (a command on the event loop's thread):
    /// resumes the transfer if it is this one's and paused for them.
    func resumeBody(readAhead: BodyReadAhead) {
        guard readAhead === self.readAhead, pausedForBody, let easy else { return }
        pausedForBody = false
        // libcurl may call the read callback from here, which may pause again. Receiving stays
        // paused if the response's consumer is behind.
        _ = ccurl_easy_pause(easy, pauseBits)
    }

    /// Rewinds the body to `offset` (libcurl re-sends it on a reused connection that turned
    /// out closed, and for authentication rounds): the read-ahead starts again there, on its
    /// workers; the next read pauses until it has bytes.
    func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard let readAhead, let source = bodySource, origin == SEEK_SET, offset >= 0,
            source.knownLength.map({ UInt64(offset) <= $0 }) ?? true
        else {
            return CurlCallbackValue.seekFail
        }
        readAhead.restart(at: UInt64(offset))
        bodyBytesHandedOut = offset
        return CurlCallbackValue.seekOK
    }
}

// The C callbacks for the body: `userdata` is the transfer (unretained; the event loop holds it
// while the handle is in the multi).

let curlReadCallback: ccurl_data_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return CurlCallbackValue.readAbort }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.readBody(into: buffer, capacity: size * count)
}

let curlSeekCallback: ccurl_seek_callback = { userdata, offset, origin in
    guard let userdata else { return CurlCallbackValue.seekFail }
    return Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue().seekBody(to: offset, origin: origin)
}
