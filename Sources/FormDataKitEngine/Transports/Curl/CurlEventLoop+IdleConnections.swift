import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

extension CurlEventLoop {
    /// Once no transfer has been in the multi handle for `idleConnectionTimeout`, replaces it with
    /// a new one, which closes every connection the old one kept (those the server closed are
    /// closed sooner, by ``CurlDeadConnectionProbe``).
    func closeIdleConnections(_ multi: UnsafeMutableRawPointer) {
        guard idleConnectionTimeout > 0, multiWasUsed else { return }
        guard active.isEmpty else {
            idleSince = nil
            return
        }
        let now = ContinuousClock.now
        guard let since = idleSince else {
            idleSince = now
            return
        }
        guard since.duration(to: now) >= .milliseconds(Int64(idleConnectionTimeout * 1000)) else { return }
        lock.withLock {
            // Commands queued meanwhile stay queued: the new handle takes them next round.
            guard let fresh = makeMulti() else { return }
            deadConnectionProbe.leave(multi)
            self.multi = fresh
            _ = ccurl_multi_cleanup(multi)
            idleSince = nil
            multiWasUsed = false
        }
    }

    /// Keeps the easy handle of `transfer` (out of the multi handle, its results read) for the
    /// next transfer, reset, while fewer than ``maximumSpareHandles`` are kept.
    func recycle(_ transfer: CurlTransfer) {
        guard spareHandles.count < Self.maximumSpareHandles, let easy = transfer.detachHandleForReuse() else { return }
        spareHandles.append(easy)
    }
}
