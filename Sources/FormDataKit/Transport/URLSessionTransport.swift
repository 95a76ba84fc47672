import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests with one long-lived `URLSession` (FoundationNetworking on Linux).
///
/// - A body in a file larger than ``inMemoryFileBodyLimit`` goes out with
///   `uploadTask(with:fromFile:)`: streamed from disk with the file's exact size as
///   `Content-Length`, no `Expect: 100-continue` stall, bounded memory.
/// - A body in memory, or in a file up to ``inMemoryFileBodyLimit`` (read into memory first),
///   goes out with `uploadTask(with:from:)`, also with its exact `Content-Length`; no body, with a
///   data task. The bytes on the wire are the same either way.
/// - Stream bodies are never used: on Linux they are always chunked, and a `Content-Length`
///   set with them is sent as well (swift-corelibs-foundation#4818), which servers reject.
/// - Progress comes from `urlSession(_:task:didSendBodyData:…)`, not `task.progress` (broken
///   for uploads on Linux).
///
/// Keep one transport (``shared``) for the life of the process: creating and invalidating
/// sessions per request is where FoundationNetworking's teardown races live.
///
/// - Warning: On Linux, cancelling an upload sent from a file, or its timing out or losing its
///   connection, while FoundationNetworking is reading the next chunk of the body file can crash
///   the process inside FoundationNetworking (`try!` in `_EasyHandle._PauseState.setState`,
///   libcurl error 43); it cannot be caught here. Bodies up to ``inMemoryFileBodyLimit`` never
///   reach that file reader. Use `AsyncHTTPClientTransport` where larger uploads are cancelled
///   or time out.
public final class URLSessionTransport: FormDataTransport {
    /// The transport every ``FormDataRequest`` uses unless told otherwise.
    public static let shared = URLSessionTransport()

    /// The default ``inMemoryFileBodyLimit``: 8 MiB on Linux, 0 elsewhere (Apple's URLSession
    /// reads upload files without that crash).
    public static let defaultInMemoryFileBodyLimit: UInt64 = platformInMemoryFileBodyLimit

    #if canImport(FoundationNetworking)
    private static let platformInMemoryFileBodyLimit: UInt64 = 8 << 20
    #else
    private static let platformInMemoryFileBodyLimit: UInt64 = 0
    #endif

    /// Bodies in a file (or built from file parts) up to this many bytes are read into memory
    /// and sent from there, so a cancel, timeout or dropped connection mid-body cannot meet
    /// FoundationNetworking's crashing file reader. Costs up to twice this much memory while such
    /// a request is in flight (FoundationNetworking copies upload data once). 0: every file body
    /// streams from its file.
    public let inMemoryFileBodyLimit: UInt64

    /// `[.bytes, .file]`: FoundationNetworking cannot stream a body with an exact length.
    public var acceptedBodyForms: TransportBodyForms { [.bytes, .file] }
    /// ``inMemoryFileBodyLimit``: bodies up to it are handed over in memory.
    public var inMemoryBodyLimit: UInt64 { inMemoryFileBodyLimit }

    /// A timeout long enough to mean "none" (7 days), for ``TransportRequest/timeoutInterval`` ≤ 0.
    static let noTimeout: TimeInterval = 7 * 24 * 3600

    private let session: URLSession
    private let router: SessionDelegate

    /// A transport with its own session: ephemeral (no cookies, cache or credentials stored),
    /// following redirects, with its callbacks on a private serial queue.
    ///
    /// - Parameter inMemoryFileBodyLimit: see ``inMemoryFileBodyLimit``.
    public init(inMemoryFileBodyLimit: UInt64 = URLSessionTransport.defaultInMemoryFileBodyLimit) {
        self.inMemoryFileBodyLimit = inMemoryFileBodyLimit
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.noTimeout
        configuration.timeoutIntervalForResource = Self.noTimeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        let queue = OperationQueue()
        queue.name = "FormDataKit.URLSessionTransport"
        queue.maxConcurrentOperationCount = 1
        let router = SessionDelegate()
        self.router = router
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    /// Starts `request` on the session; see ``FormDataTransport/start(_:observer:)``.
    /// - Parameters:
    ///   - request: what to send; a segment body is read into memory or spooled (see ``BodyDelivery``).
    ///   - observer: told of progress, the response head and the completion, on the session's queue.
    /// - Returns: a task that cancels the upload.
    public func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        // (An infinite or huge timeout means none: URLSession converts it to whole milliseconds.)
        urlRequest.timeoutInterval = request.timeoutInterval > 0 ? min(request.timeoutInterval, Self.noTimeout) : Self.noTimeout
        for header in request.headers where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.name)
        }
        let prepared: (body: TransportRequest.Body, spooled: TemporaryFile?)
        do throws(FormDataError) {
            try RequestHeaderValidation.requireValid(request.headers)
            prepared = try sendableBody(request.body)
        } catch {
            DispatchQueue.global().async { observer.transportDidComplete(.failure(error)) }
            return NoTransportTask()
        }
        let (body, spooled) = prepared
        let task: URLSessionTask
        var bodyPath: String?
        switch body {
        case .none, .source:
            task = session.dataTask(with: urlRequest)
        case .data(let data):
            task = session.uploadTask(with: urlRequest, from: data)
        case .file(let path, _):
            task = session.uploadTask(with: urlRequest, fromFile: URL(fileURLWithPath: path))
            bodyPath = path
        }
        router.register(
            task, request: request, observer: observer, expectedBodyLength: Int64(clamping: request.body.length), bodyPath: bodyPath,
            spooledBody: spooled, responseLimit: request.maximumDecompressedResponseSize,
            rawResponseLimit: request.maximumResponseSize)
        task.resume()
        return URLSessionTransportTask(task: task)
    }

    /// The body as URLSession will send it, and the temporary file made for it if any.
    ///
    /// URLSession cannot stream with an exact length on Linux, so a segment body (a request built
    /// by hand: ``FormDataRequest`` hands over bytes or a file) goes through ``BodyDelivery`` like
    /// any other: in memory up to ``inMemoryFileBodyLimit``, else a temporary file (removed at
    /// the end). A file body up to ``inMemoryFileBodyLimit`` is read into memory.
    func sendableBody(_ body: TransportRequest.Body) throws(FormDataError) -> (TransportRequest.Body, TemporaryFile?) {
        switch body {
        case .source(let source):
            do throws(FormDataError) {
                let delivered = try BodyDelivery.deliver(source, to: acceptedBodyForms, inMemoryLimit: inMemoryBodyLimit)
                return (delivered.body, delivered.temporaryFile)
            } catch {
                throw FormDataError.whileSending(error)
            }
        case .file(let path, let length) where length <= inMemoryFileBodyLimit:
            let range = FileRange(path: path, length: length, expectedFileSize: length)
            do throws(FormDataError) {
                return (.data(try BodySource(segments: [BodySegment(.file(range))]).readAll()), nil)
            } catch {
                // The same errors as when FoundationNetworking reads the file itself.
                switch error {
                case .fileNotFound: throw Self.bodyFileError(path: path, errno: ENOENT)
                case .fileIsDirectory: throw Self.bodyFileError(path: path, errno: EISDIR)
                case .fileUnreadable(_, let code): throw Self.bodyFileError(path: path, errno: code)
                default: throw FormDataError.whileSending(error)
                }
            }
        case .none, .data, .file:
            return (body, nil)
        }
    }

    /// A body file that could not be read.
    static func bodyFileError(path: String, errno code: Int32) -> FormDataError {
        .fileManagement(underlying: .temporaryFileFailed(path: path, operation: "read body", errno: code))
    }
}

/// The task of a send that failed before it started: nothing to cancel.
struct NoTransportTask: TransportTask {
    func cancel() {}
}

/// A URLSession task as a ``TransportTask``.
struct URLSessionTransportTask: TransportTask, @unchecked Sendable {
    // `@unchecked`: URLSessionTask is thread-safe for `cancel()`.
    let task: URLSessionTask

    func cancel() { task.cancel() }
}

/// The session's delegate: routes each task's callbacks to its observer and collects its body.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // `@unchecked`: `tasks` is only touched under its lock.
    private final class TaskRecord {
        /// The request of the current hop (changed by each redirect followed).
        var request: TransportRequest
        var redirects = 0
        /// Why a redirect was not followed (the send fails with it).
        var redirectError: FormDataError?
        let observer: any TransportObserver
        let expectedBodyLength: Int64
        let bodyPath: String?
        let responseLimit: UInt64
        let rawResponseLimit: UInt64
        var rawLimitExceeded = false
        /// A body the transport spooled itself (for a ``TransportRequest/Body/source(_:)``).
        let spooledBody: TemporaryFile?
        var head: TransportResponseHead?
        var body = Data()
        var challenged: URLAuthenticationChallenge?
        var limitExceeded = false

        init(
            request: TransportRequest, observer: any TransportObserver, expectedBodyLength: Int64, bodyPath: String?,
            spooledBody: TemporaryFile?, responseLimit: UInt64, rawResponseLimit: UInt64
        ) {
            self.request = request
            self.rawResponseLimit = rawResponseLimit
            self.observer = observer
            self.expectedBodyLength = expectedBodyLength
            self.bodyPath = bodyPath
            self.spooledBody = spooledBody
            self.responseLimit = responseLimit
        }
    }

    private let tasks = Locked<[Int: TaskRecord]>([:])

    func register(
        _ task: URLSessionTask, request: TransportRequest, observer: any TransportObserver, expectedBodyLength: Int64,
        bodyPath: String?, spooledBody: TemporaryFile?, responseLimit: UInt64, rawResponseLimit: UInt64
    ) {
        let record = TaskRecord(
            request: request, observer: observer, expectedBodyLength: expectedBodyLength, bodyPath: bodyPath,
            spooledBody: spooledBody, responseLimit: responseLimit, rawResponseLimit: rawResponseLimit)
        tasks.withLock { $0[task.taskIdentifier] = record }
    }

    private func record(for task: URLSessionTask) -> TaskRecord? {
        tasks.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        guard let record = record(for: task) else { return }
        let expected = totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : record.expectedBodyLength
        record.observer.transportDidSendBodyData(
            bytesSent: bytesSent, totalBytesSent: totalBytesSent, totalBytesExpected: expected)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let record = record(for: dataTask), let http = response as? HTTPURLResponse {
            let head = TransportResponseHead(statusCode: http.statusCode, headers: Self.headers(of: http))
            record.head = head
            record.observer.transportDidReceiveResponse(head)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let record = record(for: dataTask), !record.limitExceeded, !record.rawLimitExceeded else { return }
        if UInt64(record.body.count) + UInt64(data.count) > record.rawResponseLimit {
            record.rawLimitExceeded = true
            record.body = Data()
            dataTask.cancel()
            return
        }
        // libcurl inflates gzip responses itself: an encoded body arrives here decoded, so a
        // decompression bomb is stopped here, as soon as it passes the limit.
        if let head = record.head, ResponseInflation.isEncoded(head),
            UInt64(record.body.count) + UInt64(data.count) > record.responseLimit
        {
            record.limitExceeded = true
            record.body = Data()
            dataTask.cancel()
            return
        }
        record.body.append(data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let record = record(for: task) else { return completionHandler(request) }
        let decision = RedirectPolicy().decide(
            after: record.request, statusCode: response.statusCode, location: request.url, redirectsSoFar: record.redirects)
        switch decision {
        case .deliver:
            completionHandler(nil)
        case .refuse(let error):
            record.redirectError = error
            completionHandler(nil)
        case .follow(let next):
            #if canImport(FoundationNetworking)
            // FoundationNetworking follows a 307/308 without its upload body (0 bytes arrive).
            if next.body != .none {
                record.redirectError = .redirectRefused(
                    from: record.request.url.absoluteString, to: next.url.absoluteString,
                    reason: "URLSession on Linux cannot send the body again after a \(response.statusCode); CurlTransport can")
                return completionHandler(nil)
            }
            #endif
            var redirected = URLRequest(url: next.url)
            redirected.httpMethod = next.method
            redirected.timeoutInterval = request.timeoutInterval
            for header in next.headers where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
                redirected.setValue(header.value, forHTTPHeaderField: header.name)
            }
            record.request = next
            record.redirects += 1
            completionHandler(redirected)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let disposition = Self.disposition(for: challenge.protectionSpace)
        if disposition == .cancelAuthenticationChallenge { record(for: task)?.challenged = challenge }
        completionHandler(disposition, nil)
    }

    /// How a challenge for `space` is answered.
    ///
    /// - Server trust (Apple platforms deliver it to this task-level method when the session has
    ///   no handler of its own): `.performDefaultHandling`, the system's certificate checks —
    ///   cancelling it would fail every HTTPS request.
    /// - A credential challenge (Basic, Digest, NTLM…): credentials go out pre-emptively
    ///   (`Authorization`), so a challenge means they were missing or wrong; it is cancelled and
    ///   the send fails with ``FormDataError/authenticationNeeded(underlying:)`` (default
    ///   handling stalls on Linux).
    static func disposition(for space: URLProtectionSpace) -> URLSession.AuthChallengeDisposition {
        space.authenticationMethod == serverTrustMethod ? .performDefaultHandling : .cancelAuthenticationChallenge
    }

    /// `NSURLAuthenticationMethodServerTrust`'s value (the constant is unavailable in
    /// swift-corelibs-foundation, so the decision can be tested on Linux).
    static let serverTrustMethod = "NSURLAuthenticationMethodServerTrust"

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let record = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        record.spooledBody?.remove()
        let result: Result<FormDataResponse, FormDataError>
        if let redirectError = record.redirectError {
            result = .failure(redirectError)
        } else if record.rawLimitExceeded {
            result = .failure(.responseTooLarge(limit: record.rawResponseLimit))
        } else if record.limitExceeded {
            result = .failure(.compression(underlying: .decompressedSizeLimitExceeded(limit: record.responseLimit)))
        } else if let challenge = record.challenged, error != nil {
            let failure = challenge.failureResponse as? HTTPURLResponse
            result = .failure(
                ResponseInflation.authenticationNeeded(
                    TransportResponseHead(
                        statusCode: failure?.statusCode ?? 401, headers: failure.map(Self.headers(of:)) ?? [:])))
        } else if let error {
            result = .failure(Self.map(error, bodyPath: record.bodyPath))
        } else if let head = record.head
            ?? (task.response as? HTTPURLResponse).map({
                TransportResponseHead(statusCode: $0.statusCode, headers: Self.headers(of: $0))
            })
        {
            // URLSession undoes the content encoding itself (libcurl on Linux): never inflate again.
            result = ResponseInflation.response(
                head: head, body: record.body, limit: record.responseLimit,
                alreadyDecoded: true
            ).map {
                var response = $0
                response.url = record.request.url
                return response
            }
        } else {
            result = .failure(
                .connectionFailure(
                    underlying: UnderlyingError(
                        domain: "FormDataKit", code: 0, message: "The server sent no HTTP response")))
        }
        record.observer.transportDidComplete(result)
    }

    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (key, value) in response.allHeaderFields {
            headers[String(describing: key)] = String(describing: value)
        }
        return headers
    }

    /// Maps a URLSession error onto ASIHTTPRequest's categories.
    static func map(_ error: any Error, bodyPath: String?) -> FormDataError {
        let underlying = UnderlyingError(error)
        guard underlying.domain == NSURLErrorDomain else { return .connectionFailure(underlying: underlying) }
        switch underlying.code {
        case NSURLErrorTimedOut:
            return .timedOut(underlying: underlying)
        case NSURLErrorCancelled:
            return .cancelled
        case NSURLErrorUserAuthenticationRequired, NSURLErrorUserCancelledAuthentication:
            return .authenticationNeeded(underlying: underlying)
        case NSURLErrorBadURL, NSURLErrorUnsupportedURL:
            return .unableToCreateRequest(underlying: underlying)
        case NSURLErrorFileDoesNotExist, NSURLErrorNoPermissionsToReadFile, NSURLErrorFileIsDirectory:
            let code: Int32 =
                underlying.code == NSURLErrorFileDoesNotExist
                ? ENOENT
                : underlying.code == NSURLErrorFileIsDirectory ? EISDIR : EACCES
            return URLSessionTransport.bodyFileError(path: bodyPath ?? "", errno: code)
        default:
            return .connectionFailure(underlying: underlying)
        }
    }
}
