import FormDataKitBody
import FormDataKitWire
import Foundation

/// One exchange of a ``CurlTransport``: its transfer, its reports to the observer, and the
/// mapping of libcurl's results onto ``FormDataError``.
///
/// The observer is called on the event loop's thread, straight from libcurl's callbacks: the
/// send driver it reports to only records the event under a lock and returns (the façade's
/// callbacks run elsewhere), so no other transfer waits on it.
final class CurlSend: TransportTask, @unchecked Sendable {
    // `@unchecked`: `current` is touched only on the event loop's thread; `completed` is locked;
    // `clientCertificateFiles` is written once before the event loop sees the exchange.
    /// Kept so the transport (and its event loop) lives while the exchange is in flight.
    let transport: CurlTransport
    /// The request.
    let request: TransportRequest
    /// The client certificate's files, read on the reader pool before the exchange reaches the
    /// event loop (set once, before that): libcurl gets them from memory, never reading a file on
    /// the transport's thread at a handshake.
    private(set) var clientCertificateFiles: (certificate: Data, key: Data?)?
    private let observer: any TransportObserver
    /// The observer's back-pressure on the response body: the transfer pauses receiving while
    /// it is withheld (nil: never).
    let responseDemand: ResponseDemand?
    private let completed = Locked(false)

    /// The transfer in flight (event loop thread only).
    var current: CurlTransfer?

    init(transport: CurlTransport, request: TransportRequest, observer: any TransportObserver) {
        self.transport = transport
        self.request = request
        self.observer = observer
        responseDemand = ResponseDemand.of(observer)
    }

    /// Stops the exchange: its transfer is taken out of libcurl at once and the observer
    /// finishes with ``FormDataError/cancelled``.
    func cancel() { transport.eventLoop.cancel(self) }

    /// Whether the exchange has ended (a start after that is ignored).
    var isCompleted: Bool { completed.current }

    /// Reads the request's client certificate files (on the reader pool, before the exchange starts).
    /// - Throws: what reading a file throws (``WholeFileReading/read(_:)``), naming it.
    func readClientCertificate() throws(FormDataError) {
        guard let certificate = request.network.clientCertificate else { return }
        let key = try certificate.keyPath.map { (path) throws(FormDataError) in try WholeFileReading.read(path) }
        clientCertificateFiles = (try WholeFileReading.read(certificate.path), key)
    }

    private var totalLength: Int64? { request.body.knownLength.map { Int64(clamping: $0) } }

    /// The `CURLAUTH_*` schemes the transfer may answer with: none without credentials; the ones
    /// the driver asks for after a challenge; else Basic pre-emptively, or whatever the server asks.
    private var authSchemes: Int {
        let network = request.network
        guard network.credentials != nil else { return 0 }
        if !network.challengeSchemes.isEmpty {
            return CurlAuth.challengeSchemes.filter { network.challengeSchemes.contains($0.name) }.reduce(0) { $0 | $1.bit }
        }
        return network.presentsCredentialsBeforeChallenge ? CurlAuth.basic : CurlAuth.any
    }

    // MARK: - Called on the event loop's thread

    /// The transfer, set up on `easy` (a reset handle of an earlier transfer) or on a new handle.
    func makeTransfer(reusing easy: UnsafeMutableRawPointer?, transfersInFlight: Int) throws(FormDataError) -> CurlTransfer {
        let transfer = CurlTransfer(send: self, request: request, authSchemes: authSchemes)
        try transfer.prepare(configuration: transport.configuration, reusing: easy, transfersInFlight: transfersInFlight)
        current = transfer
        return transfer
    }

    /// A 1xx head arrived.
    func transferReceivedInformational(_ head: TransportResponseHead) {
        observer.transportDidReceiveInformationalResponse(head)
    }

    /// A final head arrived (libcurl may send again to answer a challenge: a later one replaces it).
    func transferReceivedHead(_ head: TransportResponseHead) {
        observer.transportDidReceiveResponse(head)
    }

    /// `totalBytesSent` bytes of the body are on the wire.
    func transferSentBody(totalBytesSent: Int64, increment: Int64) {
        // A length not known: what was sent so far is what is expected.
        let sent = min(totalBytesSent, totalLength ?? .max)
        observer.transportDidSendBodyData(bytesSent: increment, totalBytesSent: sent, totalBytesExpected: totalLength ?? sent)
    }

    /// Response body bytes arrived (decoded).
    func transferReceivedBody(_ bytes: UnsafeRawBufferPointer) {
        observer.transportDidReceiveBodyData(Data(bytes))
    }

    /// The transfer ended with libcurl result `code`.
    func transferFinished(_ transfer: CurlTransfer, code: Int32) {
        complete(code == CurlCode.ok ? nil : error(for: code, transfer: transfer))
    }

    /// Ends the exchange (once; later calls are ignored).
    func complete(_ error: FormDataError?) {
        let first = completed.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        current = nil
        observer.transportDidFinish(error)
    }

    // MARK: - Errors

    /// The send's error for `error`, met reading `body`: for a whole-file body (spooled or
    /// compressed by the engine) as URLSession reports it, else as a spooling build would.
    static func bodyReadError(_ error: FormDataError, body: TransportRequest.Body) -> FormDataError {
        // A stream that cannot be read again says so itself.
        if case .streamNotReplayable = error { return error }
        if case .file(let path, _) = body, let unreadable = FormDataError.unreadableBodyFile(error, path: path) { return unreadable }
        return .internalErrorWhileBuilding(underlying: error)
    }

    /// The error for a transfer that libcurl ended with `code`.
    private func error(for code: Int32, transfer: CurlTransfer) -> FormDataError {
        if let bodyError = transfer.bodyError { return Self.bodyReadError(bodyError, body: transfer.request.body) }
        if transfer.refusedVersion {
            return .httpVersionNotNegotiated(url: transfer.request.url.absoluteString, requested: transfer.request.network.httpVersion)
        }
        if transfer.refusedRepeat {
            return .connectionFailure(
                underlying: UnderlyingError(
                    domain: "libcurl", code: Int(code),
                    message: "the connection closed before an answer, after the request was sent; libcurl would have sent it "
                        + "again on a new connection, but a request not safe to repeat (no Idempotency-Key) is not: "
                        + "the server may have processed it"))
        }
        let message = transfer.errorText ?? CurlLibrary.describe(code)
        let underlying = UnderlyingError(domain: "libcurl", code: Int(code), message: message)
        switch code {
        case CurlCode.operationTimedOut:
            return .timedOut(underlying: underlying)
        case CurlCode.unsupportedProtocol, CurlCode.urlMalformat:
            return .unableToCreateRequest(underlying: underlying)
        case CurlCode.tooManyRedirects:
            return .tooMuchRedirection(underlying: underlying)
        case CurlCode.badContentEncoding:
            return .compression(underlying: .decompressionFailed(code: Int32(code), message: message))
        default:
            return .connectionFailure(underlying: underlying)
        }
    }
}
