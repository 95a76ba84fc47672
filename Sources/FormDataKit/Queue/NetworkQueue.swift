import Foundation

/// A queue of ``FormDataRequest``s in ASIHTTPRequest's `ASINetworkQueue` shape: add requests,
/// call ``go()``, and they are sent a few at a time (``maxConcurrentOperationCount``, 4 by
/// default) with one upload and one download progress for the whole batch.
///
/// ```swift
/// let queue = NetworkQueue()
/// queue.delegate = self                      // requestFinished, requestFailed, queueFinished…
/// queue.showAccurateProgress = true          // progress in bytes, sized when requests are added
/// for photo in photos {
///     let request = FormDataRequest(url: uploadURL)
///     try request.addFile(photo, forKey: "photo")
///     try queue.addOperation(request)
/// }
/// queue.go()
/// ```
///
/// As in ASI: a new queue is suspended until ``go()``; a request added while the queue runs is
/// picked up; the first failure cancels the rest (``shouldCancelAllRequestsOnFailure``), which
/// fail with `FormDataError.cancelled`; the request's delegate and block are called before
/// the queue's delegate. Beyond ASI: ``events`` as an `AsyncSequence`, a per-host limit
/// (``maximumConcurrentRequestsPerHost``), and queued requests hold no body — a body is built
/// when its request starts, never before (the batch is sized without building or spooling).
/// No thread is made per request: the queue owns one serial mailbox for its delegate.
/// Thread-safe.
public final class NetworkQueue: @unchecked Sendable {
    // `@unchecked`: mutable state is in `core` (a lock); `mailbox` and `idle` are thread-safe.
    // The scheduling is a value state machine; requests are sent as `startAsynchronous()` sends.

    struct Core {
        var machine = NetworkQueueStateMachine()
        var requests: [Int: FormDataRequest] = [:]
        var nextID = 0
        weak var delegate: (any NetworkQueueDelegate)?
        var delegateCalls = DelegateCalls.all
        var userInfo: [String: any Sendable]?
        var streams: [Int: AsyncStream<NetworkQueueEvent>.Continuation] = [:]
        var progressBlock: (@Sendable (NetworkQueueProgress) -> Void)?
        /// What ``NetworkQueue/progressBlock`` heard last (it hears only changes).
        var progressReported: NetworkQueueProgress?
        var nextStreamID = 0
        /// Queue-finished notices not yet delivered (``waitUntilAllOperationsAreFinished()``).
        var noticesPending = 0
        /// The queue keeps itself alive while it has requests running.
        var keepAlive: NetworkQueue?

        /// The delegate, when ``NetworkQueue/delegateCalls`` asks for `call`.
        func delegate(for call: DelegateCalls) -> (any NetworkQueueDelegate)? { delegateCalls.contains(call) ? delegate : nil }
    }

    /// Which ``NetworkQueueDelegate`` methods a queue calls: ASINetworkQueue's selectors, each
    /// one set being a member (`requestDidFinishSelector` is ``requestFinished``, and so on).
    public struct DelegateCalls: OptionSet, Sendable {
        /// The bits.
        public let rawValue: Int
        /// A set from its raw bits.
        /// - Parameter rawValue: the bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// ``NetworkQueueDelegate/requestStarted(_:)`` (`requestDidStartSelector`).
        public static let requestStarted = DelegateCalls(rawValue: 1)
        /// ``NetworkQueueDelegate/request(_:didReceiveResponseHeaders:)`` (`requestDidReceiveResponseHeadersSelector`).
        public static let responseHeaders = DelegateCalls(rawValue: 2)
        /// ``NetworkQueueDelegate/requestFinished(_:)`` (`requestDidFinishSelector`).
        public static let requestFinished = DelegateCalls(rawValue: 4)
        /// ``NetworkQueueDelegate/requestFailed(_:)`` (`requestDidFailSelector`).
        public static let requestFailed = DelegateCalls(rawValue: 8)
        /// ``NetworkQueueDelegate/queueFinished(_:)`` (`queueDidFinishSelector`).
        public static let queueFinished = DelegateCalls(rawValue: 16)
        /// Every method (the default).
        public static let all: DelegateCalls = [.requestStarted, .responseHeaders, .requestFinished, .requestFailed, .queueFinished]
    }

    let core = Locked(Core())
    /// Where the delegate is called and events are yielded, in order, one at a time.
    let mailbox = OrderedCallbacks()
    let idle = NSCondition()

    /// The whole batch's upload: body bytes with ``showAccurateProgress`` (each request's
    /// exact length), else one unit per request. Monotonic while no request is added, reaches
    /// exactly 1.0 when the queue finishes (failed and cancelled requests count as done), and a
    /// retry that sends a body again does not move it back or past its share. Requests added
    /// after the queue finished add to it (ASI's totals ran on); ``reset()`` starts it again from 0.
    public let uploadProgress = Progress(totalUnitCount: 0)
    /// The whole batch's download: each request weighs the same, moving by the fraction of its
    /// `Content-Length` received (nothing until its head arrives, all of it when it ends).
    /// Reaches exactly 1.0 when the queue finishes.
    public let downloadProgress = Progress(totalUnitCount: 0)

    /// A new queue, suspended until ``go()`` (ASI's `-init`).
    public init() {}

    /// A new queue (ASI's `+queue`).
    /// - Returns: a new, suspended queue.
    public class func queue() -> NetworkQueue { NetworkQueue() }

    deinit {
        for request in core.withLock({ Array($0.requests.values) }) { request.leaveQueue() }
        for stream in core.withLock({ Array($0.streams.values) }) { stream.finish() }
    }

    /// A new, suspended queue with this one's delegate, ``delegateCalls``, ``progressBlock``, ``shouldCancelAllRequestsOnFailure``,
    /// ``showAccurateProgress`` and ``userInfo`` (ASI's `copy`); no requests.
    /// - Returns: the copy.
    public func copy() -> NetworkQueue {
        let copied = NetworkQueue()
        copied.delegate = delegate
        copied.delegateCalls = delegateCalls
        copied.progressBlock = progressBlock
        copied.shouldCancelAllRequestsOnFailure = shouldCancelAllRequestsOnFailure
        copied.showAccurateProgress = showAccurateProgress
        copied.userInfo = userInfo
        return copied
    }

    // MARK: - Settings

    /// The queue's delegate, held weakly (see ``NetworkQueueDelegate``).
    public var delegate: (any NetworkQueueDelegate)? {
        get { core.withLock { $0.delegate } }
        set { core.withLock { $0.delegate = newValue } }
    }

    /// Which of the delegate's methods the queue calls; ``DelegateCalls/all`` by default. ASI
    /// called only those whose selector was set: port `[queue setRequestDidFinishSelector:…]`
    /// and `[queue setQueueDidFinishSelector:…]` as `[.requestFinished, .queueFinished]`. A class
    /// that is also its requests' delegate lists only the queue's own moments here, or it hears
    /// each request's twice. ``events`` carries every event whatever this says.
    public var delegateCalls: DelegateCalls {
        get { core.withLock { $0.delegateCalls } }
        set { core.withLock { $0.delegateCalls = newValue } }
    }

    /// Called whenever the batch's counters move, with where they stand: on the queue's mailbox,
    /// in order with the delegate's calls and after the call for the moment that moved them
    /// (a request's end, then the progress it completes). The way to follow a batch without
    /// KVO (Linux cannot observe ``uploadProgress``): port ASI's `setUploadProgressDelegate:` and
    /// `setDownloadProgressDelegate:` as
    /// `queue.progressBlock = { progress in bar.progress = progress.uploadFraction }`.
    public var progressBlock: (@Sendable (NetworkQueueProgress) -> Void)? {
        get { core.withLock { $0.progressBlock } }
        set { core.withLock { $0.progressBlock = newValue } }
    }

    /// Anything you want to keep with the queue (ASI's `userInfo`).
    public var userInfo: [String: any Sendable]? {
        get { core.withLock { $0.userInfo } }
        set { core.withLock { $0.userInfo = newValue } }
    }

    /// How many requests are sent at once; 4 by default (ASI's). 0 holds every request (as
    /// `NSOperationQueue` does); a negative value means the default. Raising it while the queue
    /// runs starts waiting requests at once.
    public var maxConcurrentOperationCount: Int {
        get { core.withLock { $0.machine.maxConcurrent } }
        set { apply(.setMaxConcurrent(newValue)) }
    }

    /// How many requests to one host are sent at once; 0 (the default) for no limit beyond
    /// ``maxConcurrentOperationCount``. A request whose host is at its limit waits while later
    /// requests to other hosts start.
    public var maximumConcurrentRequestsPerHost: Int {
        get { core.withLock { $0.machine.perHostLimit } }
        set { apply(.setPerHostLimit(newValue)) }
    }

    /// Whether the queue holds its waiting requests (running ones go on). True for a new queue
    /// until ``go()``; setting false starts requests, as ``go()`` does.
    public var isSuspended: Bool {
        get { core.withLock { $0.machine.isSuspended } }
        set { apply(.setSuspended(newValue)) }
    }

    /// Whether the first request to fail cancels every other (waiting and running), which then
    /// fail with `FormDataError.cancelled`; true by default (ASI's).
    public var shouldCancelAllRequestsOnFailure: Bool {
        get { core.withLock { $0.machine.shouldCancelAllRequestsOnFailure } }
        set { core.withLock { $0.machine.shouldCancelAllRequestsOnFailure = newValue } }
    }

    /// Whether progress is counted in bytes (false, the default: one unit per request). With it
    /// on, each request added counts its exact body length, computed without building or
    /// spooling the body (a compressed body counts its uncompressed length, scaled as its
    /// compressed bytes go out). Set it before adding requests.
    public var showAccurateProgress: Bool {
        get { core.withLock { $0.machine.showAccurateProgress } }
        set { core.withLock { $0.machine.showAccurateProgress = newValue } }
    }

    // MARK: - Counters

    /// Requests added and not yet finished or failed (ASI's `requestsCount`).
    public var requestsCount: Int { core.withLock { $0.machine.requestsCount } }

    /// Upload units done in this batch: body bytes with ``showAccurateProgress``, else finished
    /// requests (ASI's `bytesUploadedSoFar`).
    public var bytesUploadedSoFar: UInt64 { core.withLock { $0.machine.uploadUnitsDone } }

    /// Upload units of this batch: the sum of the bodies' lengths with ``showAccurateProgress``
    /// (an empty body counts 1), else the number of requests (ASI's `totalBytesToUpload`).
    public var totalBytesToUpload: UInt64 { core.withLock { $0.machine.totalUploadUnits } }

    /// Response body bytes received in this batch with ``showAccurateProgress`` (a retried
    /// response counts once), else finished requests (ASI's `bytesDownloadedSoFar`).
    public var bytesDownloadedSoFar: UInt64 { core.withLock { $0.machine.bytesDownloadedSoFar } }

    /// The sum of the responses' `Content-Length`s known so far with ``showAccurateProgress``,
    /// else the number of requests (ASI's `totalBytesToDownload`).
    public var totalBytesToDownload: UInt64 { core.withLock { $0.machine.totalBytesToDownload } }

    // MARK: - Running

    /// Adds `request`; it is sent when the queue is not suspended and a slot is free. With
    /// ``showAccurateProgress`` its body length is counted now (computed, nothing built).
    ///
    /// A request is in one queue at a time: one already in a queue (this one or another,
    /// waiting or running) or being sent is refused, and the queue is left as it was — the
    /// batch goes on and finishes as if the call had not been made. `NSOperationQueue` raised
    /// for an operation already enqueued or executing; here it is an error you can catch. Once
    /// the request has ended (``NetworkQueueDelegate/requestFinished(_:)`` or
    /// ``NetworkQueueDelegate/requestFailed(_:)``), it may be added again.
    /// - Parameter request: the request (not in a queue, not being sent).
    /// - Throws: `FormDataError.requestAlreadyQueued(url:isRunning:)` naming the request's URL.
    public func addOperation(_ request: FormDataRequest) throws(FormDataError) {
        let share = showAccurateProgress ? max(1, request.exactPostLengthWithoutSpooling ?? 1) : 1
        try add(request, host: request.url.host?.lowercased() ?? "", share: share, priority: request.queuePriority.rawValue)
    }

    /// Starts the queue (ASI's `go`: ``isSuspended`` becomes false).
    public func go() { isSuspended = false }

    /// Cancels every request: waiting ones fail with `FormDataError.cancelled` without being
    /// sent, running ones are cancelled (and fail with it). Each is reported to its delegate and
    /// the queue's. The counters are not zeroed (ASI zeroed them): the batch's progress ends at
    /// exactly 1.0 when the last cancelled request has ended.
    public func cancelAllOperations() { apply(.cancelAll) }

    /// Cancels every request, forgets the delegate and suspends the queue (ASI's `reset`); the
    /// counters and progress start again from zero (at once, or once the cancelled
    /// requests have ended).
    public func reset() {
        core.withLock { $0.delegate = nil }
        apply(.reset)
        isSuspended = true
    }

    /// Blocks until every request added has ended and the queue's delegate has heard
    /// `queueFinished`. A suspended queue holding requests waits until ``go()`` (as
    /// `NSOperationQueue` does). Never call it from a queue or request callback.
    public func waitUntilAllOperationsAreFinished() {
        idle.lock()
        defer { idle.unlock() }
        while !core.withLock({ $0.machine.requestsCount == 0 && $0.noticesPending == 0 }) { idle.wait() }
    }

    /// The queue's events, in the order the delegate hears them, from now until the queue is
    /// released (each access gives a new sequence; stop iterating to unsubscribe).
    public var events: AsyncStream<NetworkQueueEvent> {
        let (stream, continuation) = AsyncStream<NetworkQueueEvent>.makeStream()
        let id = core.withLock { core -> Int in
            core.nextStreamID += 1
            core.streams[core.nextStreamID] = continuation
            return core.nextStreamID
        }
        continuation.onTermination = { [weak self] _ in _ = self?.core.withLock { $0.streams.removeValue(forKey: id) } }
        return stream
    }
}
