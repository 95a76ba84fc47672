import Foundation

/// Everything about sending a ``FormDataRequest``: settings, callbacks, the send in flight and
/// the results. Guarded by the request's `sending` lock.
struct SendingState {
    /// A weak reference to the delegate (ASIHTTPRequest did not retain its delegate).
    struct WeakDelegate {
        weak var value: (any FormDataRequestDelegate)?
    }

    // Settings
    var timeOutSeconds: TimeInterval = FormDataRequest.defaultTimeOutSeconds
    var numberOfTimesToRetryOnTimeout = 0
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
    /// Nil until set: ``URLSessionTransport/shared`` is created only when a request is sent.
    var transport: (any FormDataTransport)?

    // Callbacks
    var callbackQueue: DispatchQueue?
    var delegate = WeakDelegate()
    var startedBlock: (@Sendable () -> Void)?
    var completionBlock: (@Sendable () -> Void)?
    var failedBlock: (@Sendable () -> Void)?
    var bytesSentBlock: (@Sendable (UInt64, UInt64) -> Void)?

    // The send in flight
    var inFlight = false
    var cancelRequested = false
    var currentTask: (any TransportTask)?
    let uploadProgress = Progress(totalUnitCount: 0)

    // Results
    var retryCount = 0
    var totalBytesSent: UInt64 = 0
    var error: FormDataError?
    var responseStatusCode = 0
    var responseReasonPhrase: String?
    var responseHeaders: [String: String]?
    var responseData: Data?
    var responseURL: URL?
    var authentication = AuthenticationOutcome()

    /// Clears the results of an earlier send.
    mutating func resetResults() {
        retryCount = 0
        totalBytesSent = 0
        error = nil
        responseStatusCode = 0
        responseReasonPhrase = nil
        responseHeaders = nil
        responseData = nil
        responseURL = nil
        authentication = AuthenticationOutcome()
        cancelRequested = false
        currentTask = nil
    }
}
