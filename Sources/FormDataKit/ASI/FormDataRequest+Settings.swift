import Foundation

extension FormDataRequest {
    // MARK: - Sending settings

    /// The default for ``timeOutSeconds``: 10 seconds, as in ASIHTTPRequest.
    public static let defaultTimeOutSeconds: TimeInterval = 10

    /// The `User-Agent` sent when ``userAgentString`` is nil: `<process name> (FormDataKit)`.
    public static var defaultUserAgentString: String {
        "\(ProcessInfo.processInfo.processName) (FormDataKit)"
    }

    /// Seconds without any byte sent or received before the request fails with
    /// `FormDataError.timedOut(underlying:)`; 10 by default; 0 or less turns the timeout off.
    public var timeOutSeconds: TimeInterval {
        get { sending.withLock { $0.settings.timeOutSeconds } }
        set { sending.withLock { $0.settings.timeOutSeconds = newValue } }
    }

    /// Seconds the whole send may take — every retry, redirect and authentication round
    /// included — before it fails with `FormDataError.timedOut(underlying:)` (not retried);
    /// 0 (the default) or less: no total limit. ASIHTTPRequest had only the idle timeout
    /// (``timeOutSeconds``), which a server that sends one byte now and then never trips.
    public var totalTimeOutSeconds: TimeInterval {
        get { sending.withLock { $0.settings.totalTimeOutSeconds } }
        set { sending.withLock { $0.settings.totalTimeOutSeconds = newValue } }
    }

    /// How many times a timed-out request is sent again (the same body; a spooled body file is
    /// kept until the last try); 0 by default. ASIHTTPRequest's meaning: any timeout, at once —
    /// also a POST whose body the server already processed. Not used when ``retryPolicy`` is set
    /// (see the Retries article).
    public var numberOfTimesToRetryOnTimeout: Int {
        get { sending.withLock { $0.settings.numberOfTimesToRetryOnTimeout } }
        set { sending.withLock { $0.settings.numberOfTimesToRetryOnTimeout = max(0, newValue) } }
    }

    /// How many times the last send was retried after a timeout (with a ``retryPolicy``: for any
    /// reason it allowed).
    public var retryCount: Int { sending.withLock { $0.results.retryCount } }

    /// The user name for HTTP Basic authentication. When set (with ``password``) and no
    /// `Authorization` header is set, the credentials are sent with the first request
    /// (pre-emptively, as ASIHTTPRequest did with the Basic scheme), so a body is sent once.
    public var username: String? {
        get { sending.withLock { $0.settings.username } }
        set { sending.withLock { $0.settings.username = newValue } }
    }

    /// The password for HTTP Basic authentication (see ``username``).
    public var password: String? {
        get { sending.withLock { $0.settings.password } }
        set { sending.withLock { $0.settings.password = newValue } }
    }

    /// Sets `Authorization: Basic <base64(username:password)>` on the request headers.
    /// - Parameters:
    ///   - username: the user name (UTF-8).
    ///   - password: the password (UTF-8).
    public func addBasicAuthenticationHeader(withUsername username: String, andPassword password: String) {
        addRequestHeader("Authorization", value: Self.basicAuthorization(username: username, password: password))
    }

    /// Whether to ask for a gzip-compressed response (`Accept-Encoding: gzip`) and inflate it;
    /// true by default. When false, `Accept-Encoding: identity` is sent.
    public var allowCompressedResponse: Bool {
        get { sending.withLock { $0.settings.allowCompressedResponse } }
        set { sending.withLock { $0.settings.allowCompressedResponse = newValue } }
    }

    /// The largest response body accepted after decompression, in bytes (256 MiB by default): a
    /// response with a `Content-Encoding` (gzip) that inflates past it is stopped then and fails
    /// with `FormDataError.compression(underlying:)` wrapping
    /// `FormDataError.decompressedSizeLimitExceeded(limit:)` — a guard against decompression
    /// bombs. Bodies without a content encoding are not limited by it.
    public var maximumDecompressedResponseSize: UInt64 {
        get { sending.withLock { $0.settings.maximumDecompressedResponseSize } }
        set { sending.withLock { $0.settings.maximumDecompressedResponseSize = newValue } }
    }

    /// The default ``maximumDecompressedResponseSize``: 256 MiB.
    public static let defaultMaximumDecompressedResponseSize: UInt64 = TransportRequest.defaultMaximumDecompressedResponseSize

    /// The largest response body accepted as it arrives, in bytes, encoded or not (256 MiB by
    /// default): receiving stops as soon as a body grows past it and the send fails with
    /// `FormDataError.responseTooLarge(limit:)`. Enforced by the curl transport (the Linux
    /// default); see the transports article (ChoosingATransport) for the others.
    public var maximumResponseSize: UInt64 {
        get { sending.withLock { $0.settings.maximumResponseSize } }
        set { sending.withLock { $0.settings.maximumResponseSize = newValue } }
    }

    /// The default ``maximumResponseSize``: 256 MiB.
    public static let defaultMaximumResponseSize: UInt64 = TransportRequest.defaultMaximumResponseSize

    /// The `User-Agent` header; nil sends ``defaultUserAgentString``. A `User-Agent` in
    /// ``requestHeaders`` wins over both.
    public var userAgentString: String? {
        get { sending.withLock { $0.settings.userAgentString } }
        set { sending.withLock { $0.settings.userAgentString = newValue } }
    }

    /// What sends the request; ``defaultTransport`` unless set.
    ///
    /// The transport decides the form the body is handed over in (see `BodyDelivery`): one that
    /// streams (`CurlTransport`, the Linux default, and the AsyncHTTPClient transport) gets the
    /// encoded body unspooled. The built body itself does not depend on the transport.
    public var transport: any FormDataTransport {
        get { sending.withLock { $0.settings.transport } ?? Self.defaultTransport }
        set { sending.withLock { $0.settings.transport = newValue } }
    }

    /// The transport of every request whose ``transport`` is not set: unless changed,
    /// `CurlTransport.shared` on Linux (`URLSessionTransport.shared` there when libcurl
    /// cannot be loaded), `URLSessionTransport.shared` on Apple platforms. Requests read it when
    /// they build and send; `AFHTTPSessionManager` uses it too.
    public static var defaultTransport: any FormDataTransport {
        get { defaultTransportStorage.current ?? platformDefaultTransport }
        set { defaultTransportStorage.withLock { $0 = newValue } }
    }

    /// Nil until set, so the platform's default transport is created only when it is used.
    private static let defaultTransportStorage = Locked<(any FormDataTransport)?>(nil)

    /// The transport used when none is chosen: ``CurlTransport`` on Linux with libcurl loaded.
    static var platformDefaultTransport: any FormDataTransport {
        #if os(Linux)
        if CurlTransport.isAvailable { return CurlTransport.shared }
        #endif
        return URLSessionTransport.shared
    }

    // MARK: - Callbacks

    /// The delegate, held weakly (see ``FormDataRequestDelegate`` for order and threads).
    public var delegate: (any FormDataRequestDelegate)? {
        get { sending.withLock { $0.callbacks.delegate.value } }
        set { sending.withLock { $0.callbacks.delegate.value = newValue } }
    }

    /// Called when the request starts (after ``FormDataRequestDelegate/requestStarted(_:)``).
    public var startedBlock: (@Sendable () -> Void)? {
        get { sending.withLock { $0.callbacks.startedBlock } }
        set { sending.withLock { $0.callbacks.startedBlock = newValue } }
    }

    /// Called when the request finishes with a response (after the delegate's `requestFinished`).
    public var completionBlock: (@Sendable () -> Void)? {
        get { sending.withLock { $0.callbacks.completionBlock } }
        set { sending.withLock { $0.callbacks.completionBlock = newValue } }
    }

    /// Called when the request fails (after the delegate's `requestFailed`); see ``error``.
    public var failedBlock: (@Sendable () -> Void)? {
        get { sending.withLock { $0.callbacks.failedBlock } }
        set { sending.withLock { $0.callbacks.failedBlock = newValue } }
    }

    /// Called as the body goes out with the bytes sent since the last call and the body's total
    /// length (ASIHTTPRequest's `bytesSentBlock(size, total)`). The sizes add up to the total
    /// (0 while a stream's length is not known).
    public var bytesSentBlock: (@Sendable (_ sent: UInt64, _ total: UInt64) -> Void)? {
        get { sending.withLock { $0.callbacks.bytesSentBlock } }
        set { sending.withLock { $0.callbacks.bytesSentBlock = newValue } }
    }

    /// Called as the body goes out with the bytes the current attempt has sent so far and the
    /// body's length, after ``bytesSentBlock``; once more with `(length, length)` when the
    /// request finishes, if no call said so yet (an empty body, a response before the whole
    /// body). A retry starts it again from 0. While a stream's length is not known the length is
    /// 0, and the last call is `(sent, sent)`. The way to follow a request's upload without KVO
    /// (Linux cannot observe ``uploadProgress``): port ASI's `setUploadProgressDelegate:` as
    /// `request.uploadProgressBlock = { sent, length in bar.progress = Double(sent) / Double(max(length, 1)) }`.
    public var uploadProgressBlock: (@Sendable (_ sent: UInt64, _ length: UInt64) -> Void)? {
        get { sending.withLock { $0.callbacks.uploadProgressBlock } }
        set { sending.withLock { $0.callbacks.uploadProgressBlock = newValue } }
    }

    // MARK: - Results

    /// Upload progress of the current or last send, in bytes of the body (counted from the
    /// transport's send callbacks). Reaches exactly 1.0 when the request finishes; reset to 0 when
    /// a send starts or is retried. While a stream's length is not known its total is
    /// `Int64.max` (the fraction stays near 0), set to the bytes sent when the request finishes.
    /// The same discrete `Progress` for the request's life, never
    /// attached to a parent by itself: add it to one with `addChild(_:withPendingUnitCount:)`.
    public var uploadProgress: Progress { sending.withLock { $0.current.uploadProgress } }

    /// Body bytes sent by the current or last send.
    public var totalBytesSent: UInt64 { sending.withLock { $0.results.totalBytesSent } }

    /// Why the last send failed; nil after a success (a 404 or 500 is a success).
    public var error: FormDataError? { sending.withLock { $0.results.error } }

    /// The status code of the last response; 0 until response headers arrive.
    public var responseStatusCode: Int { sending.withLock { $0.results.responseStatusCode } }

    /// The status line of the last response, e.g. `HTTP/1.1 404 Not Found`, with the server's
    /// own reason phrase when the transport saw it (the curl transport does), else the standard
    /// one; nil before a response.
    public var responseStatusMessage: String? {
        let (code, phrase) = sending.withLock { ($0.results.responseStatusCode, $0.results.responseReasonPhrase) }
        return code == 0 ? nil : TransportResponseHead(statusCode: code, headers: [:], reasonPhrase: phrase).statusLine
    }

    /// Anything you want to keep with the request for its callbacks (ASIHTTPRequest's
    /// `userInfo`); nil by default, never sent. ``copy()`` copies it.
    public var userInfo: [String: any Sendable]? {
        get { sending.withLock { $0.settings.userInfo } }
        set { sending.withLock { $0.settings.userInfo = newValue } }
    }

    /// A number of your own for the request (ASIHTTPRequest's `tag`); 0 by default, never sent.
    /// ``copy()`` copies it.
    public var tag: Int {
        get { sending.withLock { $0.settings.tag } }
        set { sending.withLock { $0.settings.tag = newValue } }
    }

    /// Where the delegate, the blocks and `start()`'s completion are called, one at a time and in
    /// ASIHTTPRequest's order (started, headers, bytes sent…, finished or failed). Nil (the
    /// default) means the platform's default: the main queue on Apple platforms (as ASI called
    /// delegates that update UI), a private serial queue per send on Linux (command-line programs
    /// rarely run a main loop). ``startSynchronous()`` called on this queue itself (the main
    /// queue on the main actor, say) runs the callbacks on its own thread while it waits, in the
    /// same order, so it never deadlocks.
    public var callbackQueue: DispatchQueue? {
        get { sending.withLock { $0.callbacks.callbackQueue } }
        set {
            if let newValue { CallbackInbox.mark(newValue) }
            sending.withLock { $0.callbacks.callbackQueue = newValue }
        }
    }

    /// ``callbackQueue``, or the platform's default (nil: the send's private queue).
    var effectiveCallbackQueue: DispatchQueue? {
        #if canImport(Darwin)
        return callbackQueue ?? CallbackInbox.markedMainQueue
        #else
        return callbackQueue
        #endif
    }

    /// The URL that answered the last send, after redirects (ASIHTTPRequest's `url` once
    /// redirected); nil before a response, or when the transport does not say.
    public var responseURL: URL? { sending.withLock { $0.results.responseURL } }

    /// The headers of the last response; nil before a response.
    public var responseHeaders: [String: String]? { sending.withLock { $0.results.responseHeaders } }

    /// The body of the last response (inflated when it came gzip-compressed); nil before one.
    public var responseData: Data? { sending.withLock { $0.results.responseData } }

    /// The body of the last response as text, decoded with the response's `charset`, or
    /// ``defaultResponseEncoding`` when it names none; nil before a response.
    public var responseString: String? {
        let (data, headers, encoding) = sending.withLock {
            ($0.results.responseData, $0.results.responseHeaders, $0.settings.defaultResponseEncoding)
        }
        guard let data else { return nil }
        return FormDataResponse(statusCode: 0, headers: headers ?? [:], body: data).string(defaultEncoding: encoding)
    }

    /// How ``responseString`` reads a response whose `Content-Type` names no charset (or one
    /// not known); ISO-8859-1 by default, as ASIHTTPRequest's `defaultResponseEncoding`. Set
    /// `.utf8` for a back end that sends UTF-8 without saying so. ``copy()`` copies it.
    public var defaultResponseEncoding: String.Encoding {
        get { sending.withLock { $0.settings.defaultResponseEncoding } }
        set { sending.withLock { $0.settings.defaultResponseEncoding = newValue } }
    }

    /// Whether a send is in progress.
    public var isExecuting: Bool { sending.withLock { $0.current.inFlight } }

    static func basicAuthorization(username: String, password: String) -> String {
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }
}
