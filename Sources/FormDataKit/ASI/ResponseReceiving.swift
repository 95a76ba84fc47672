import FormDataKitBody
import FormDataKitEngine
import FormDataKitWire
import Foundation

/// Where each write of a response file goes, in order, in the file's writer (never on a
/// transport's thread): the file itself by default. A request may be given another
/// (``SendSettings/responseFileWriter``), as a test gives one that holds writes back the way a
/// slow disk does.
protocol ResponseFileWriter: Sendable {
    /// Appends `data` to `file`.
    /// - Parameters:
    ///   - data: the next bytes of the body.
    ///   - file: the response's temporary file.
    /// - Throws: what the file's write throws (``FormDataError/fileUnwritable(path:errno:)``).
    func write(_ data: Data, to file: ResponseDownloadFile) throws(FormDataError)
}

/// Writes straight to the file.
struct DirectResponseFileWriter: ResponseFileWriter {
    func write(_ data: Data, to file: ResponseDownloadFile) throws(FormDataError) { try file.write(data) }
}

/// The response body of one send of a ``FormDataRequest`` as it arrives: written to
/// ``FormDataRequest/downloadDestinationPath`` through a temporary file (the façade adapter
/// counts it for ``FormDataRequest/bytesReceivedBlock`` and a queue's download progress).
/// Made when the body goes to a file, to ``FormDataRequest/dataReceivedBlock`` or is counted.
///
/// Threads: ``responseHead(_:)`` and ``received(_:)`` come in order from the send driver (one
/// at a time, possibly on a transport's thread): they only count and queue work, and never
/// wait. File writes run in order in a ``SerialMailbox`` on the shared global queue, never on
/// the transport's thread. The bytes waiting to be written are counted by ``demand``: past
/// ``writeBacklogLimit`` (a disk slower than the network) the transport pauses this send's
/// exchange — and only it — until the writes are down to half of that, so memory stays bounded.
final class ResponseReceiving: @unchecked Sendable {
    // `@unchecked`: `file` is touched only in `writes`; `failure` under `lock`.

    /// The most response bytes waiting to be written before the send's exchange pauses receiving.
    static let writeBacklogLimit = ResponseDemand.defaultLimit

    /// Whether the finished response keeps its body (false with a data block or a file).
    let keepsBody: Bool
    /// Whether the response goes to a file.
    var writesFile: Bool { file != nil }
    /// The back-pressure of the file's writes, for the send driver's exchanges (nil without a file).
    let demand: ResponseDemand?
    private let file: ResponseDownloadFile?
    private let writer: any ResponseFileWriter
    private let writes = SerialMailbox()
    private let lock = Locked()
    private var failure: FormDataError?
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
        writer = settings.responseFileWriter
        demand = file == nil ? nil : ResponseDemand(limit: Self.writeBacklogLimit)
    }

    /// A response head: the body starts again (after a retry).
    func responseHead(_ head: TransportResponseHead) {
        if let file { queueWrite(0) { (_) throws(FormDataError) in try file.restart() } }
    }

    /// Body bytes: queued for the file.
    func received(_ data: Data) {
        if let file { queueWrite(data.count) { [writer] (_) throws(FormDataError) in try writer.write(data, to: file) } }
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
            if let failure = lock.withLock({ failure }) {
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

    /// Queues `work` on the file's writer, counting its `count` bytes in ``demand`` until it
    /// ran: never waits (the transport pauses when too many are outstanding). After a failure
    /// the rest is skipped and nothing pauses any more: the send is being cancelled.
    private func queueWrite(_ count: Int, _ work: @escaping @Sendable (Int) throws(FormDataError) -> Void) {
        demand?.took(count)
        writes.post { [self] in
            let skip = lock.withLock { failure != nil }
            var error: FormDataError?
            if !skip {
                do throws(FormDataError) { try work(count) } catch let thrown { error = thrown }
            }
            let firstFailure = lock.withLock { () -> Bool in
                guard let error, failure == nil else { return false }
                failure = error
                return true
            }
            if firstFailure { demand?.release() }
            demand?.finished(count)
            if error != nil { cancelSend?() }
        }
    }
}
