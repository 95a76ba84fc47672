import Foundation

/// One send of a ``CurlTransport``: its transfers (one per redirect hop), the order of its
/// observer calls, and the mapping of libcurl's results onto ``FormDataError``.
///
/// The observer is called on the send's own serial queue, never on the event loop's thread,
/// so a slow observer cannot hold up other sends. Progress is coalesced: one call carries every
/// byte sent since the last one.
final class CurlSend: TransportTask, @unchecked Sendable {
    // `@unchecked`: `current`, `redirects` and `headReported` are touched only on the event
    // loop's thread; the progress fields only under `lock`.
    /// Kept so the transport (and its event loop) lives while the send is in flight.
    let transport: CurlTransport
    let originalRequest: TransportRequest
    let followsRedirects: Bool
    private let policy: RedirectPolicy
    private let observer: any TransportObserver
    private let observerQueue = DispatchQueue(label: "FormDataKit.CurlTransport.send")

    /// The transfer in flight (event loop thread only).
    var current: CurlTransfer?
    private var redirects = 0
    private var headReported = false
    /// The `CURLAUTH_*` schemes the hops may answer with (0 without credentials).
    private var authSchemes: Int
    /// Hops sent again to answer a challenge.
    private var authRetries = 0

    private let lock = NSLock()
    private var latestSent: Int64 = 0
    private var reportedSent: Int64 = 0
    private var progressScheduled = false
    private var completed = false

    init(transport: CurlTransport, request: TransportRequest, observer: any TransportObserver) {
        self.transport = transport
        self.originalRequest = request
        self.observer = observer
        self.followsRedirects = transport.configuration.followsRedirects
        self.policy = RedirectPolicy(maximumRedirects: transport.configuration.maximumRedirects)
        if request.network.credentials == nil {
            authSchemes = 0
        } else {
            // Pre-emptive: Basic goes with the first request (ASI's default); otherwise libcurl
            // sends the first request bare and answers whatever the server asks for.
            authSchemes = request.network.presentsCredentialsBeforeChallenge ? CurlAuth.basic : CurlAuth.any
        }
    }

    /// Cancels the send: its transfer is taken out of libcurl at once and the observer completes
    /// with ``FormDataError/cancelled``.
    func cancel() { transport.eventLoop.cancel(self) }

    private var totalLength: Int64 { Int64(clamping: originalRequest.body.length) }

    // MARK: - Called on the event loop's thread

    /// The first transfer, set up.
    func makeFirstTransfer() throws(FormDataError) -> CurlTransfer {
        let transfer = CurlTransfer(send: self, request: originalRequest, authSchemes: authSchemes)
        try transfer.prepare(configuration: transport.configuration)
        current = transfer
        return transfer
    }

    /// A 401 after pre-emptive Basic that offers another scheme: the same request again, answering
    /// that scheme (libcurl probes, then answers, re-sending the body from its parts); nil when
    /// there is nothing else to try.
    private func transferAnsweringChallenge(after transfer: CurlTransfer) -> CurlTransfer? {
        guard transfer.statusCode == 401, authSchemes == CurlAuth.basic, authRetries == 0,
            transfer.request.network.credentials != nil
        else { return nil }
        let others = transfer.schemesOffered & ~CurlAuth.basic & (CurlAuth.digest | CurlAuth.ntlm | CurlAuth.negotiate)
        guard others != 0 else { return nil }
        authSchemes = others
        authRetries += 1
        return CurlTransfer(send: self, request: transfer.request, authSchemes: others)
    }

    /// How the send authenticated, for the response.
    private func authenticationOutcome(of transfer: CurlTransfer) -> AuthenticationOutcome {
        var scheme: String?
        if transfer.request.network.credentials != nil, authSchemes != 0 {
            let offered = transfer.schemesOffered
            // The scheme libcurl answered with: the most secure one allowed that the server
            // offered (Basic when it went pre-emptively and was accepted).
            scheme =
                authSchemes == CurlAuth.basic
                ? "Basic"
                : CurlAuth.challengeSchemes.first { authSchemes & $0.bit != 0 && offered & $0.bit != 0 }?.name
        }
        return AuthenticationOutcome(
            scheme: scheme, realm: transfer.lastChallenge.flatMap(AuthenticationOutcome.realm(in:)),
            retryCount: authRetries)
    }

    /// The final head of `transfer` arrived (from the header callback).
    func transferReceivedHead(_ transfer: CurlTransfer) {
        if followsRedirects && RedirectPolicy.isRedirect(statusCode: transfer.statusCode, hasLocation: transfer.header("Location") != nil) {
            return  // followed: the next hop's head is the one that counts
        }
        deliverHead(of: transfer)
    }

    private func deliverHead(of transfer: CurlTransfer) {
        guard !headReported else { return }
        headReported = true
        let head = transfer.head
        let observer = self.observer
        observerQueue.async { observer.transportDidReceiveResponse(head) }
    }

    /// `totalBytesSent` bytes of the current hop's body are on the wire.
    func transferSentBody(_ transfer: CurlTransfer, totalBytesSent: Int64) {
        let schedule = lock.withLock { () -> Bool in
            let sent = min(totalBytesSent, totalLength)
            if sent > latestSent { latestSent = sent }
            guard !progressScheduled, !completed, latestSent > reportedSent else { return false }
            progressScheduled = true
            return true
        }
        if schedule { observerQueue.async { self.flushProgress() } }
    }

    /// Reports the bytes sent since the last report (on the observer queue).
    private func flushProgress() {
        let update = lock.withLock { () -> (Int64, Int64)? in
            progressScheduled = false
            guard latestSent > reportedSent else { return nil }
            defer { reportedSent = latestSent }
            return (latestSent - reportedSent, latestSent)
        }
        if let (sent, soFar) = update {
            observer.transportDidSendBodyData(bytesSent: sent, totalBytesSent: soFar, totalBytesExpected: totalLength)
        }
    }

    /// `transfer` ended with libcurl result `code`. Returns the next hop's transfer (a redirect
    /// to follow), or nil once the send has completed.
    func transferFinished(_ transfer: CurlTransfer, code: Int32) -> CurlTransfer? {
        guard code == CurlCode.ok else {
            complete(.failure(error(for: code, transfer: transfer)))
            return nil
        }
        if let retry = transferAnsweringChallenge(after: transfer) {
            do throws(FormDataError) {
                try retry.prepare(configuration: transport.configuration)
            } catch {
                complete(.failure(error))
                return nil
            }
            retry.inheritChallenge(from: transfer)
            current = retry
            return retry
        }
        if followsRedirects {
            switch policy.decide(
                after: transfer.request, statusCode: transfer.statusCode,
                location: transfer.header("Location") == nil ? nil : transfer.redirectURL,
                redirectsSoFar: redirects)
            {
            case .deliver:
                break
            case .refuse(let error):
                complete(.failure(error))
                return nil
            case .follow(let next):
                redirects += 1
                // Credentials stay for the same origin only (the policy drops them otherwise).
                let nextTransfer = CurlTransfer(send: self, request: next, authSchemes: next.network.credentials == nil ? 0 : authSchemes)
                do throws(FormDataError) {
                    try nextTransfer.prepare(configuration: transport.configuration)
                } catch {
                    complete(.failure(error))
                    return nil
                }
                current = nextTransfer
                return nextTransfer
            }
        }
        deliverHead(of: transfer)
        let authentication = authenticationOutcome(of: transfer)
        let result = ResponseInflation.response(
            head: transfer.head, body: transfer.body, limit: transfer.request.maximumDecompressedResponseSize,
            alreadyDecoded: true
        ).map { response -> FormDataResponse in
            var response = response
            response.url = transfer.request.url
            response.authentication = authentication
            return response
        }
        complete(result)
        return nil
    }

    /// Ends the send with `result` (once; later calls are ignored).
    func complete(_ result: Result<FormDataResponse, FormDataError>) {
        let first = lock.withLock { () -> Bool in
            defer { completed = true }
            return !completed
        }
        guard first else { return }
        current = nil
        let observer = self.observer
        observerQueue.async {
            if case .success = result { self.flushProgress() }
            observer.transportDidComplete(result)
        }
    }

    // MARK: - Errors

    /// The error for a transfer that libcurl ended with `code`.
    private func error(for code: Int32, transfer: CurlTransfer) -> FormDataError {
        if let bodyError = transfer.bodyError {
            if case .file(let path, _) = transfer.request.body {
                // A whole-file body (spooled or compressed by the engine): as URLSession reports it.
                switch bodyError {
                case .fileNotFound: return URLSessionTransport.bodyFileError(path: path, errno: ENOENT)
                case .fileIsDirectory: return URLSessionTransport.bodyFileError(path: path, errno: EISDIR)
                case .fileUnreadable(_, let errno): return URLSessionTransport.bodyFileError(path: path, errno: errno)
                default: break
                }
            }
            return .internalErrorWhileBuilding(underlying: bodyError)
        }
        if transfer.responseLimitExceeded {
            let request = transfer.request
            if transfer.isEncoded && request.maximumDecompressedResponseSize < request.maximumResponseSize {
                return .compression(underlying: .decompressedSizeLimitExceeded(limit: request.maximumDecompressedResponseSize))
            }
            return .responseTooLarge(limit: request.maximumResponseSize)
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

    /// The error for a send that went quiet for its idle timeout.
    var idleTimeoutError: FormDataError {
        .timedOut(
            underlying: UnderlyingError(
                domain: "FormDataKit", code: 0,
                message: "No bytes sent or received for \(originalRequest.timeoutInterval) s"))
    }
}
