import FormDataKitBody
import FormDataKitWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests with one long-lived `URLSession` (FoundationNetworking on Linux), one exchange
/// per task: the send driver follows redirects, answers the idle clock and limits responses.
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
    /// The transport every `FormDataRequest` uses unless told otherwise.
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

    /// Starts `request` on the session; see `FormDataTransport.start(_:observer:)`.
    /// - Parameters:
    ///   - request: what to send; a segment body is read into memory or spooled (see ``BodyDelivery``).
    ///   - observer: told of progress, the response head and the completion, on the session's queue.
    /// - Returns: a task that cancels the upload.
    public func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        // The idle clock is the send driver's.
        urlRequest.timeoutInterval = Self.noTimeout
        for header in request.headers where !header.name.equalsIgnoringASCIICase("Content-Length") {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.name)
        }
        let prepared: (body: TransportRequest.Body, spooled: TemporaryFile?)
        do throws(FormDataError) {
            prepared = try sendableBody(request.body)
        } catch {
            observer.transportDidFinish(error)
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
            task, observer: observer, expectedBodyLength: Int64(clamping: request.body.length), bodyPath: bodyPath, spooledBody: spooled)
        task.resume()
        return URLSessionTransportTask(task: task)
    }

    /// The body as URLSession will send it, and the temporary file made for it if any.
    ///
    /// URLSession cannot stream with an exact length on Linux, so a segment body (a request built
    /// by hand: ``FormDataRequest`` hands over bytes or a file) goes through ``BodyDelivery`` like
    /// any other: in memory up to ``inMemoryFileBodyLimit``, else a temporary file (removed at
    /// the end). A file body up to ``inMemoryFileBodyLimit`` is read into memory. A body with
    /// streams is refused (``FormDataError/transportCannotStream(transport:)``): it does not take
    /// `TransportBodyForms.stream`.
    func sendableBody(_ body: TransportRequest.Body) throws(FormDataError) -> (TransportRequest.Body, TemporaryFile?) {
        switch body {
        case .source(let source):
            do throws(FormDataError) {
                let delivered = try BodyDelivery.deliver(
                    source, to: acceptedBodyForms, inMemoryLimit: inMemoryBodyLimit, transport: "URLSessionTransport")
                return (delivered.body, delivered.temporaryFile)
            } catch {
                throw FormDataError.whileSending(error)
            }
        case .file(let path, let length) where length <= inMemoryFileBodyLimit:
            let range = FileRange(path: path, length: length, expectedFileSize: length)
            do throws(FormDataError) {
                return (.data(try BodySource(segments: [BodySegment(.file(range))]).readAll()), nil)
            } catch {
                throw FormDataError.unreadableBodyFile(error, path: path) ?? .whileSending(error)
            }
        case .none, .data, .file:
            return (body, nil)
        }
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

/// The session's delegate: routes each task's callbacks to its exchange's observer.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // `@unchecked`: `tasks` is only touched under its lock; a record's fields only on the
    // session's serial delegate queue.
    private final class TaskRecord {
        let observer: any TransportObserver
        let expectedBodyLength: Int64
        let bodyPath: String?
        /// A body the transport spooled itself (for a ``TransportRequest/Body/source(_:)``).
        let spooledBody: TemporaryFile?
        var headReported = false
        var challenged: URLAuthenticationChallenge?

        init(observer: any TransportObserver, expectedBodyLength: Int64, bodyPath: String?, spooledBody: TemporaryFile?) {
            self.observer = observer
            self.expectedBodyLength = expectedBodyLength
            self.bodyPath = bodyPath
            self.spooledBody = spooledBody
        }
    }

    private let tasks = Locked<[Int: TaskRecord]>([:])

    func register(
        _ task: URLSessionTask, observer: any TransportObserver, expectedBodyLength: Int64, bodyPath: String?,
        spooledBody: TemporaryFile?
    ) {
        let record = TaskRecord(observer: observer, expectedBodyLength: expectedBodyLength, bodyPath: bodyPath, spooledBody: spooledBody)
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
            record.headReported = true
            record.observer.transportDidReceiveResponse(TransportResponseHead(statusCode: http.statusCode, headers: Self.headers(of: http)))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record(for: dataTask)?.observer.transportDidReceiveBodyData(data)
    }

    /// Never followed here: one exchange per task, the 3xx is the response (the send driver
    /// follows it, sending the body again for a 307/308, which FoundationNetworking cannot).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
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
    ///   the 401 is the response (the send fails with
    ///   ``FormDataError/authenticationNeeded(underlying:)``; default handling stalls on Linux).
    static func disposition(for space: URLProtectionSpace) -> URLSession.AuthChallengeDisposition {
        space.authenticationMethod == serverTrustMethod ? .performDefaultHandling : .cancelAuthenticationChallenge
    }

    /// `NSURLAuthenticationMethodServerTrust`'s value (the constant is unavailable in
    /// swift-corelibs-foundation, so the decision can be tested on Linux).
    static let serverTrustMethod = "NSURLAuthenticationMethodServerTrust"

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let record = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        record.spooledBody?.remove()
        if let challenge = record.challenged, error != nil {
            // The cancelled challenge's 401 (or 407) is the response.
            let failure = challenge.failureResponse as? HTTPURLResponse
            if !record.headReported {
                record.observer.transportDidReceiveResponse(
                    TransportResponseHead(statusCode: failure?.statusCode ?? 401, headers: failure.map(Self.headers(of:)) ?? [:]))
            }
            record.observer.transportDidFinish(nil)
        } else if let error {
            record.observer.transportDidFinish(Self.map(error, bodyPath: record.bodyPath))
        } else {
            if !record.headReported, let http = task.response as? HTTPURLResponse {
                record.observer.transportDidReceiveResponse(
                    TransportResponseHead(statusCode: http.statusCode, headers: Self.headers(of: http)))
            }
            record.observer.transportDidFinish(nil)
        }
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
            return .bodyFileUnreadable(path: bodyPath ?? "", errno: code)
        default:
            return .connectionFailure(underlying: underlying)
        }
    }
}

extension FormDataError {
    /// `error`, met reading the whole-file body at `path`, as FoundationNetworking reports an
    /// upload file it cannot read; nil for any other error.
    static func unreadableBodyFile(_ error: FormDataError, path: String) -> FormDataError? {
        switch error {
        case .fileNotFound: .bodyFileUnreadable(path: path, errno: ENOENT)
        case .fileIsDirectory: .bodyFileUnreadable(path: path, errno: EISDIR)
        case .fileUnreadable(_, let code): .bodyFileUnreadable(path: path, errno: code)
        default: nil
        }
    }
}
