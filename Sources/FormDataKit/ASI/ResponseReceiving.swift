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

/// The response body of one send of a ``FormDataRequest`` written to
/// ``FormDataRequest/downloadDestinationPath`` through a temporary file, as it arrives.
///
/// Threads: ``responseHead()`` and ``received(_:)`` come in order from the send driver (one
/// at a time, possibly on a transport's thread): they only count and queue work, and never
/// wait. File writes run in order in an `OrderedCallbacks` (a serial mailbox on the shared global queue), never on
/// the transport's thread. The bytes waiting to be written are counted by ``demand``: past
/// ``writeBacklogLimit`` (a disk slower than the network) the transport pauses this send's
/// exchange — and only it — until the writes are down to half of that, so memory stays bounded.
final class ResponseReceiving: @unchecked Sendable {
    // `@unchecked`: `file` and `failure` are touched only in `writes`, one job at a time.

    /// The most response bytes waiting to be written before the send's exchange pauses receiving.
    static let writeBacklogLimit = ResponseDemand.defaultLimit

    /// The back-pressure of the file's writes, for the send driver's exchanges.
    let demand = ResponseDemand(limit: ResponseReceiving.writeBacklogLimit)
    private let file: ResponseDownloadFile
    private let writer: any ResponseFileWriter
    private let writes = OrderedCallbacks()
    private var failure: FormDataError?
    /// Stops the send when a write failed.
    var cancelSend: (@Sendable () -> Void)?

    /// Creates the temporary file before anything is sent, when the body goes to a file; nil
    /// when it does not (also when ``FormDataRequest/dataReceivedBlock`` takes it: as in
    /// ASIHTTPRequest, the block wins).
    /// - Throws: ``FormDataError/fileExists(path:)`` naming the temporary path when something is
    ///   there already (it is left alone); ``FormDataError/fileUnwritable(path:errno:)`` naming it
    ///   when it cannot be created.
    init?(callbacks: SendCallbacks, settings: SendSettings) throws(FormDataError) {
        guard let destination = settings.downloadDestinationPath, callbacks.dataReceivedBlock == nil else { return nil }
        file = try ResponseDownloadFile(destination: destination, temporaryPath: settings.temporaryFileDownloadPath)
        writer = settings.responseFileWriter
    }

    /// A response head: the body starts again (after a retry).
    func responseHead() {
        queueWrite(0) { [file] () throws(FormDataError) in try file.restart() }
    }

    /// Body bytes: queued for the file.
    func received(_ data: Data) {
        queueWrite(data.count) { [writer, file] () throws(FormDataError) in try writer.write(data, to: file) }
    }

    /// Runs `then` once every write is done, with the send's outcome: the file is moved into
    /// place after a success, removed after a failure; a write or move failure replaces a success
    /// (and the cancel it caused).
    func finish(
        _ result: Result<FormDataResponse, FormDataError>, then: @escaping @Sendable (Result<FormDataResponse, FormDataError>) -> Void
    ) {
        writes.deliver { [self] in
            var outcome = result
            if let failure {
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
    private func queueWrite(_ count: Int, _ work: @escaping @Sendable () throws(FormDataError) -> Void) {
        demand.took(count)
        writes.deliver { [self] in
            var failed = false
            do throws(FormDataError) {
                if failure == nil { try work() }
            } catch {
                failure = error
                failed = true
                demand.release()
            }
            demand.finished(count)
            if failed { cancelSend?() }
        }
    }
}
