import Foundation

/// The response body of one send of a ``FormDataRequest`` as it arrives: written to
/// ``FormDataRequest/downloadDestinationPath`` through a temporary file, counted for
/// ``FormDataRequest/bytesReceivedBlock`` and a queue's download progress, handed to
/// ``FormDataRequest/dataReceivedBlock``.
///
/// Threads: ``responseHead(_:)`` and ``received(_:)`` come in order from the send driver (one
/// at a time, possibly on a transport's thread): they only count and queue work. File writes
/// run in order in a ``SerialMailbox`` on the shared global queue, never on the transport's
/// thread; when more than ``writeBacklogLimit`` bytes wait to be written (a disk slower than
/// the network) the driver's thread waits, so memory stays bounded.
final class ResponseReceiving: @unchecked Sendable {
    // `@unchecked`: `received`/`expected` are touched by the driver's events only (one at a
    // time); `file` only in `writes`; `backlog`/`failure` under `condition`.

    /// The most response bytes waiting to be written before the driver's thread waits.
    static let writeBacklogLimit = 8 * 1024 * 1024

    /// Whether the finished response keeps its body (false with a data block or a file).
    let keepsBody: Bool
    /// Whether the response goes to a file.
    var writesFile: Bool { file != nil }
    private let file: ResponseDownloadFile?
    private let writes = SerialMailbox()
    private let condition = NSCondition()
    private var backlog = 0
    private var failure: FormDataError?
    private var received: UInt64 = 0
    private var expected: UInt64 = 0
    /// Stops the send when a write failed.
    var cancelSend: (@Sendable () -> Void)?

    /// Whether a send with `callbacks` and `settings`, in a queue or not, needs the body as it comes.
    static func isNeeded(_ callbacks: SendCallbacks, _ settings: SendSettings, queued: Bool) -> Bool {
        queued || settings.downloadDestinationPath != nil || callbacks.dataReceivedBlock != nil
            || callbacks.bytesReceivedBlock != nil
    }

    /// Creates the temporary file when the body goes to a file (not when ``FormDataRequest/dataReceivedBlock``
    /// takes it: as in ASIHTTPRequest, the block wins), before anything is sent.
    /// - Throws: ``FormDataError/fileExists(path:)`` naming the temporary path when something is
    ///   there already (it is left alone); ``FormDataError/fileUnwritable(path:errno:)`` naming it
    ///   when it cannot be created.
    init(callbacks: SendCallbacks, settings: SendSettings) throws(FormDataError) {
        if let destination = settings.downloadDestinationPath, callbacks.dataReceivedBlock == nil {
            file = try ResponseDownloadFile(destination: destination, temporaryPath: settings.temporaryFileDownloadPath)
        } else {
            file = nil
        }
        keepsBody = file == nil && callbacks.dataReceivedBlock == nil
    }

    /// A response head: the body starts again (after a redirect or a retry).
    /// - Returns: its Content-Length, if any.
    func responseHead(_ head: TransportResponseHead) -> UInt64? {
        received = 0
        let length = head.contentLength
        expected = length ?? 0
        if let file { queueWrite(0) { (_) throws(FormDataError) in try file.restart() } }
        return length
    }

    /// Body bytes: counted, and queued for the file.
    /// - Returns: the bytes of this response so far and its expected length (0: unknown).
    func received(_ data: Data) -> (received: UInt64, expected: UInt64) {
        received += UInt64(data.count)
        if let file { queueWrite(data.count) { (_) throws(FormDataError) in try file.write(data) } }
        return (received, expected)
    }

    /// Runs `then` once every write is done, with the send's outcome: the file is moved into
    /// place after a success, removed after a failure; a write or move failure replaces a success
    /// (and the cancel it caused).
    func finish(
        _ result: Result<FormDataResponse, FormDataError>, then: @escaping @Sendable (Result<FormDataResponse, FormDataError>) -> Void
    ) {
        guard let file else { return then(result) }
        writes.post { [self] in
            var outcome = result
            if let failure = condition.withLock({ failure }) {
                outcome = .failure(.whileSending(failure))
                file.discard()
            } else if case .success = result {
                do throws(FormDataError) { try file.complete() } catch { outcome = .failure(.whileSending(error)) }
            } else {
                file.discard()
            }
            then(outcome)
        }
    }

    private func queueWrite(_ count: Int, _ work: @escaping @Sendable (Int) throws(FormDataError) -> Void) {
        condition.withLock {
            while backlog > Self.writeBacklogLimit && failure == nil { condition.wait() }
            backlog += count
        }
        writes.post { [self] in
            let skip = condition.withLock { failure != nil }
            var error: FormDataError?
            if !skip {
                do throws(FormDataError) { try work(count) } catch let thrown { error = thrown }
            }
            condition.withLock {
                backlog -= count
                if let error, failure == nil { failure = error }
                condition.broadcast()
            }
            if error != nil { cancelSend?() }
        }
    }
}
