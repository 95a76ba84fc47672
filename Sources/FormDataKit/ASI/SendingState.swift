import Foundation

/// Everything about sending a ``FormDataRequest``, guarded by the request's `sending` lock, in
/// four parts kept apart: the caller's send settings, the callbacks, the send in flight, and the
/// results of the last send.
struct SendingState {
    var settings = SendSettings()
    var callbacks = SendCallbacks()
    var current = SendInFlight()
    var results = SendResults()
    /// The queue holding the request, if any (not copied by ``FormDataRequest/copy()``).
    var membership = QueueMembership()
}

/// The caller's settings for sending (ASIHTTPRequest's timeouts, credentials, proxy, limits).
struct SendSettings {
    var timeOutSeconds: TimeInterval = FormDataRequest.defaultTimeOutSeconds
    var totalTimeOutSeconds: TimeInterval = 0
    var numberOfTimesToRetryOnTimeout = 0
    var retryPolicy: RetryPolicy?
    var shouldSendIdempotencyKey = false
    var idempotencyKey: String?
    var username: String?
    var password: String?
    /// Everything of ``NetworkOptions`` but the credentials (kept in `username`/`password`/`domain`)
    /// and the proxy (kept in the `proxy…` fields).
    var network = NetworkOptions()
    var domain: String?
    var proxyHost: String?
    var proxyPort = 0
    var proxyType = NetworkOptions.ProxyType.http
    var proxyUsername: String?
    var proxyPassword: String?
    var proxyDomain: String?
    var allowCompressedResponse = true
    var userAgentString: String?
    var maximumDecompressedResponseSize = FormDataRequest.defaultMaximumDecompressedResponseSize
    var maximumResponseSize = FormDataRequest.defaultMaximumResponseSize
    var downloadDestinationPath: String?
    var temporaryFileDownloadPath: String?
    var defaultResponseEncoding = String.Encoding.isoLatin1
    var userInfo: [String: any Sendable]?
    var tag = 0
    var queuePriority = Operation.QueuePriority.normal
    /// Nil until set: ``URLSessionTransport/shared`` is created only when a request is sent.
    var transport: (any FormDataTransport)?
    /// Where a response written to a file goes, write by write (the file itself; a test passes
    /// one that holds writes back, as a slow disk does).
    var responseFileWriter: any ResponseFileWriter = DirectResponseFileWriter()

    /// The network options of a send, from the settings above.
    var networkOptions: NetworkOptions {
        var options = network
        if let username { options.credentials = .init(user: username, password: password ?? "", domain: domain) }
        if let proxyHost, !proxyHost.isEmpty {
            let credentials = proxyUsername.map { NetworkOptions.Credentials(user: $0, password: proxyPassword ?? "", domain: proxyDomain) }
            let port = proxyPort > 0 ? proxyPort : (proxyType == .socks5 ? 1080 : 8080)
            options.proxy = .init(host: proxyHost, port: port, type: proxyType, credentials: credentials)
        }
        if options.maximumUploadBytesPerSecond == 0 { options.maximumUploadBytesPerSecond = FormDataRequest.maxBandwidthPerSecond }
        return options
    }
}

/// Where and what to report: the delegate (held weakly) and the blocks.
struct SendCallbacks {
    /// A weak reference to the delegate (ASIHTTPRequest did not retain its delegate).
    struct WeakDelegate {
        weak var value: (any FormDataRequestDelegate)?
    }

    var callbackQueue: DispatchQueue?
    var delegate = WeakDelegate()
    var startedBlock: (@Sendable () -> Void)?
    var completionBlock: (@Sendable () -> Void)?
    var failedBlock: (@Sendable () -> Void)?
    var bytesSentBlock: (@Sendable (UInt64, UInt64) -> Void)?
    var uploadProgressBlock: (@Sendable (UInt64, UInt64) -> Void)?
    var headersReceivedBlock: (@Sendable ([String: String]) -> Void)?
    var bytesReceivedBlock: (@Sendable (UInt64, UInt64) -> Void)?
    var dataReceivedBlock: (@Sendable (Data) -> Void)?
    var uploadSizeIncrementedBlock: (@Sendable (Int64) -> Void)?
    var downloadSizeIncrementedBlock: (@Sendable (Int64) -> Void)?
}

/// The queue a request was added to: held weakly (the queue holds the request), with the
/// request's number in it.
struct QueueMembership {
    weak var queue: NetworkQueue?
    var id = 0
}

/// The send in flight.
struct SendInFlight {
    var inFlight = false
    /// The send in flight, or the last one (the façade adapter: a cancel before it started is
    /// kept there, and its upload resumption after it ended).
    var send: FacadeSend?
    /// Made on first use: a request waiting in a queue of thousands holds none.
    private var progressObject: Progress?
    /// The upload progress of the current or last send (the same object for the request's life).
    var uploadProgress: Progress {
        mutating get {
            if let progressObject { return progressObject }
            // Discrete: never attached to whatever `Progress.current()` is on the thread that
            // happens to make it (a caller adds it to a parent of its own with `addChild`).
            let made = Progress.discreteProgress(totalUnitCount: 0)
            progressObject = made
            return made
        }
    }
}

/// What the last send produced.
struct SendResults {
    var retryCount = 0
    var totalBytesSent: UInt64 = 0
    var error: FormDataError?
    var responseStatusCode = 0
    var responseReasonPhrase: String?
    var responseHeaders: [String: String]?
    var responseData: Data?
    var responseURL: URL?
    var authentication = AuthenticationOutcome()
    var responseHTTPVersion: ResponseHTTPVersion?
}
