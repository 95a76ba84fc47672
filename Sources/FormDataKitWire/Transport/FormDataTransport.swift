import Foundation

/// Something that carries out ONE HTTP exchange — a request head and its body out, a response
/// back — and reports what happens, by callbacks.
///
/// Everything else a send is (retries after timeouts, redirects, answering a challenge by
/// sending again, the idle clock, progress, response size limits, completion exactly once, error
/// categories) is the send driver's, the same for every transport: `FormDataRequest` and
/// FormDataKitAF's managers send through it. So a transport never follows a redirect (a 3xx is a
/// response like any other), never times a send out (``TransportRequest/timeoutInterval`` is
/// for information), and never limits a response: it reports the bytes as they come and stops
/// when told (``TransportTask/cancel()``).
///
/// `CurlTransport` (libcurl), `URLSessionTransport` and the AsyncHTTPClient transport
/// implement it; so can a user's own. Callbacks are plain functions rather than `async` so that
/// `FormDataRequest.startSynchronous()` can block any thread without deadlocking.
public protocol FormDataTransport: Sendable {
    /// Starts the exchange and reports it to `observer`: body bytes sent, 1xx responses, the
    /// response head (more than one when the transport answers an authentication challenge
    /// itself: the last is the response), body bytes, and then, exactly once and last,
    /// ``TransportObserver/transportDidFinish(_:)``. Calls for one exchange never overlap; they
    /// may come on the transport's own thread, so an observer returns quickly.
    /// - Parameters:
    ///   - request: the head and the body, in a form the transport takes (``acceptedBodyForms``).
    ///   - observer: told what happens.
    /// - Returns: a handle that stops the exchange.
    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask

    /// The forms of body this transport can send (see ``TransportBodyForms``). A request's body
    /// is turned into one of them when it is sent, by `BodyDelivery`: a transport that takes
    /// ``TransportBodyForms/stream`` gets the encoded body unspooled (in memory up to
    /// ``inMemoryBodyLimit``).
    /// `[.bytes, .file]` by default.
    var acceptedBodyForms: TransportBodyForms { get }

    /// Bodies up to this many bytes are handed over in memory, read straight from their parts
    /// where the send is prepared (never on the transport's threads); larger ones are streamed
    /// (``TransportBodyForms/stream``) or spooled to a temporary file. `BodyDelivery.defaultInMemoryLimit`
    /// (1 MiB) by default.
    var inMemoryBodyLimit: UInt64 { get }

    /// What the transport applies of ``TransportRequest/network`` and of the response (see
    /// ``TransportCapabilities``). A request whose options need a capability the transport lacks
    /// fails before anything is sent, naming the option. `[.decodesContentEncoding]` by default.
    var capabilities: TransportCapabilities { get }

    /// The rules redirects are followed by for sends on this transport; nil: a redirect is the
    /// response. ASIHTTPRequest's rules with at most 5 redirects by default.
    var redirectPolicy: RedirectPolicy? { get }
}

extension FormDataTransport {
    /// `[.bytes, .file]`: the transport is given bodies in memory or in a file.
    public var acceptedBodyForms: TransportBodyForms { [.bytes, .file] }
    /// 1 MiB (`BodyDelivery.defaultInMemoryLimit`).
    public var inMemoryBodyLimit: UInt64 { TransportBodyForms.defaultInMemoryLimit }
    /// Whether ``acceptedBodyForms`` includes ``TransportBodyForms/stream``: the transport reads
    /// a body's segments itself as it sends them, so nothing is spooled for it.
    public var streamsBodySource: Bool { acceptedBodyForms.contains(.stream) }
    /// `[.decodesContentEncoding]`: the response body arrives decoded; no network option beyond
    /// headers is applied.
    public var capabilities: TransportCapabilities { [.decodesContentEncoding] }
    /// ASIHTTPRequest's rules, at most 5 redirects.
    public var redirectPolicy: RedirectPolicy? { RedirectPolicy() }
    /// Whether the transport answers authentication challenges with the request's credentials
    /// (``TransportCapabilities/challengeAuthentication``). When false, `FormDataRequest` sends
    /// Basic credentials in an `Authorization` header of its own.
    public var answersAuthenticationChallenges: Bool { capabilities.contains(.challengeAuthentication) }
}

/// The forms in which a transport can take a request body (``TransportRequest/Body``).
public struct TransportBodyForms: OptionSet, Sendable, Hashable {
    /// Bodies up to this size go to a transport in memory unless it says otherwise: 1 MiB.
    package static let defaultInMemoryLimit: UInt64 = 1 << 20

    /// The set's bits.
    public let rawValue: UInt8
    /// Makes a set from its raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bytes in memory (``TransportRequest/Body/data(_:)``).
    public static let bytes = TransportBodyForms(rawValue: 1 << 0)
    /// The whole of a file (``TransportRequest/Body/file(path:length:)``).
    public static let file = TransportBodyForms(rawValue: 1 << 1)
    /// The encoded body's segments, read while sending (``TransportRequest/Body/source(_:)``).
    public static let stream = TransportBodyForms(rawValue: 1 << 2)
    /// Every form.
    public static let all: TransportBodyForms = [.bytes, .file, .stream]
}

/// An exchange in flight, returned by ``FormDataTransport/start(_:observer:)``.
public protocol TransportTask: Sendable {
    /// Stops the exchange; the observer then finishes with ``FormDataError/cancelled`` (unless
    /// it already finished). A transport stops promptly, whatever the body's reads are doing.
    func cancel()
}

/// Receives what happens to one exchange. Calls for one exchange never overlap.
public protocol TransportObserver: Sendable {
    /// Body bytes went out: `bytesSent` just now, `totalBytesSent` so far in this exchange, of
    /// `totalBytesExpected` (0 when the transport does not know).
    /// - Parameters:
    ///   - bytesSent: bytes sent since the last call.
    ///   - totalBytesSent: bytes of the body sent so far in this exchange.
    ///   - totalBytesExpected: the body's length, 0 when unknown.
    func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64)
    /// A 1xx response arrived (`100 Continue`, `104 Upload Resumption Supported`…).
    /// - Parameter head: its status and headers.
    func transportDidReceiveInformationalResponse(_ head: TransportResponseHead)
    /// A response head arrived, before its body.
    /// - Parameter head: its status and headers.
    func transportDidReceiveResponse(_ head: TransportResponseHead)
    /// Response body bytes arrived (decoded when the transport has
    /// ``TransportCapabilities/decodesContentEncoding``).
    /// - Parameter data: the bytes.
    func transportDidReceiveBodyData(_ data: Data)
    /// The exchange ended, exactly once and last: nil when the whole response arrived, else why
    /// it failed, in ``FormDataError``'s sending categories.
    /// - Parameter error: nil on success.
    func transportDidFinish(_ error: FormDataError?)
}

extension TransportObserver {
    /// Ignores the 1xx response.
    /// - Parameter head: its status and headers.
    public func transportDidReceiveInformationalResponse(_ head: TransportResponseHead) {}

    /// Reports a whole response at once: its head, its body, the end. For transports that get
    /// the response in one piece.
    /// - Parameter response: the response, its body decoded.
    public func transportDidReceive(_ response: FormDataResponse) {
        transportDidReceiveResponse(
            TransportResponseHead(statusCode: response.statusCode, headers: response.headers, reasonPhrase: response.reasonPhrase))
        if !response.body.isEmpty { transportDidReceiveBodyData(response.body) }
        transportDidFinish(nil)
    }
}

/// What a transport sends: everything is resolved (headers final, body built).
public struct TransportRequest: Sendable, Equatable {
    /// Where the body comes from.
    public enum Body: Sendable, Equatable {
        /// No body.
        case none
        /// A body held in memory (sent with its exact `Content-Length`).
        case data(Data)
        /// A body in a file, streamed from disk with the file's size as `Content-Length`.
        case file(path: String, length: UInt64)
        /// An encoded body, read segment by segment while it is sent (exact `Content-Length`,
        /// no spool). Given only to transports whose ``FormDataTransport/acceptedBodyForms``
        /// include ``TransportBodyForms/stream``, unless built by hand. A file whose size changed fails the send with
        /// ``FormDataError/fileChanged(path:expectedSize:actualSize:)``.
        case source(BodySource)

        /// The body as segments to read (nil for ``none``): what a streaming transport sends and
        /// what a compressor reads, whichever way the body was handed over.
        package var segments: BodySource? {
            switch self {
            case .none: return nil
            case .data(let data): return BodySource(segments: [BodySegment(.bytes(data))])
            case .file(let path, let length):
                return BodySource(segments: [BodySegment(.file(FileRange(path: path, length: length, expectedFileSize: length)))])
            case .source(let source): return source
            }
        }

        /// The exact number of bytes the body has, or nil when a stream's length is unknown (the
        /// body goes out `Transfer-Encoding: chunked`).
        public var knownLength: UInt64? {
            if case .source(let source) = self { return source.knownLength }
            return length
        }

        /// Whether the body can be sent again (another attempt, a redirect, a challenge): false
        /// when it reads a stream added without a factory (``StreamedContent/isReplayable``).
        public var isReplayable: Bool {
            if case .source(let source) = self { return source.isReplayable }
            return true
        }

        /// The number of bytes the body has (for a length not known, ``BodySource/length``: the
        /// bytes of its other segments).
        public var length: UInt64 {
            switch self {
            case .none: return 0
            case .data(let data): return UInt64(data.count)
            case .file(_, let length): return length
            case .source(let source): return source.length
            }
        }
    }

    /// The default ``maximumDecompressedResponseSize``: 256 MiB.
    public static let defaultMaximumDecompressedResponseSize: UInt64 = 256 << 20
    /// The default ``maximumResponseSize``: 256 MiB.
    public static let defaultMaximumResponseSize: UInt64 = 256 << 20

    /// The parts, in one shared box: a request is copied at every step of a send (into the
    /// driver, each exchange, each action), and a box is one reference to copy instead of
    /// ~370 bytes and some twenty references. A change copies the box first when it is shared.
    private var storage: Storage

    /// The URL to send to.
    public var url: URL {
        get { storage.url }
        set { unique.url = newValue }
    }
    /// The HTTP method.
    public var method: String {
        get { storage.method }
        set { unique.method = newValue }
    }
    /// Header fields, in the order they are set. `Content-Length` is never among them: the
    /// transport derives it from the body.
    public var headers: [(name: String, value: String)] {
        get { storage.headers }
        set { unique.headers = newValue }
        // In place (`request.headers.append(…)`): no copy of the part beside the box's.
        _modify { yield &unique.headers }
    }
    /// The body.
    public var body: Body {
        get { storage.body }
        set { unique.body = newValue }
    }
    /// Seconds without any bytes sent or received before the send fails with
    /// ``FormDataError/timedOut(underlying:)``; 0 or less means no timeout.
    public var timeoutInterval: TimeInterval {
        get { storage.timeoutInterval }
        set { unique.timeoutInterval = newValue }
    }
    /// Seconds the whole send may take — every attempt, redirect and challenge answered — before
    /// it fails with ``FormDataError/timedOut(underlying:)`` (never retried); 0 or less (the
    /// default): no total limit, only ``timeoutInterval``. The send driver enforces it.
    public var totalTimeoutInterval: TimeInterval {
        get { storage.totalTimeoutInterval }
        set { unique.totalTimeoutInterval = newValue }
    }
    /// The largest response body accepted once a `Content-Encoding` (gzip) is undone; a
    /// transport stops receiving when a decoded body grows past it and completes with
    /// ``FormDataError/compression(underlying:)`` wrapping
    /// ``FormDataError/decompressedSizeLimitExceeded(limit:)``. 256 MiB unless set.
    public var maximumDecompressedResponseSize: UInt64 {
        get { storage.maximumDecompressedResponseSize }
        set { unique.maximumDecompressedResponseSize = newValue }
    }
    /// The largest response body accepted as it arrives, before any decoding; a transport that
    /// enforces it stops receiving past it and completes with
    /// ``FormDataError/responseTooLarge(limit:)``. 256 MiB unless set.
    public var maximumResponseSize: UInt64 {
        get { storage.maximumResponseSize }
        set { unique.maximumResponseSize = newValue }
    }
    /// Authentication, proxy, bandwidth, TLS and cookie settings (see ``NetworkOptions`` for
    /// which transports apply which).
    public var network: NetworkOptions {
        get { storage.network }
        set { unique.network = newValue }
        // In place (`request.network.append(…)`): no copy of the part beside the box's.
        _modify { yield &unique.network }
    }
    /// Whether the exchange must open a connection of its own rather than reuse one (a resumed
    /// upload's append, which a transport must never re-send by itself).
    package var opensFreshConnection: Bool {
        get { storage.opensFreshConnection }
        set { unique.opensFreshConnection = newValue }
    }

    /// A request with all its parts.
    /// - Parameters:
    ///   - url: where to send it.
    ///   - method: the HTTP method, as it goes out.
    ///   - headers: the header fields in order (a `Content-Length` among them is ignored).
    ///   - body: the body, in a form the transport takes (see ``FormDataTransport/acceptedBodyForms``).
    ///   - timeoutInterval: seconds without progress before ``FormDataError/timedOut(underlying:)``;
    ///     0 or less: none.
    public init(url: URL, method: String, headers: [(name: String, value: String)], body: Body, timeoutInterval: TimeInterval) {
        storage = Storage(url: url, method: method, headers: headers, body: body, timeoutInterval: timeoutInterval)
    }

    /// The box, made this request's own before a change.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// The value of header `name` (compared case-insensitively), or nil.
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value (the last one set, for a request), or nil when there is none.
    public func header(_ name: String) -> String? {
        headers.last { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Requests are equal when every part is equal (headers in order).
    public static func == (lhs: TransportRequest, rhs: TransportRequest) -> Bool {
        lhs.url == rhs.url && lhs.method == rhs.method && lhs.body == rhs.body
            && lhs.timeoutInterval == rhs.timeoutInterval && lhs.totalTimeoutInterval == rhs.totalTimeoutInterval
            && lhs.maximumDecompressedResponseSize == rhs.maximumDecompressedResponseSize
            && lhs.maximumResponseSize == rhs.maximumResponseSize
            && lhs.network == rhs.network && lhs.opensFreshConnection == rhs.opensFreshConnection
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

extension TransportRequest {
    /// The parts of a ``TransportRequest``. `@unchecked Sendable`: a box is changed only while
    /// one request holds it (``TransportRequest/unique``); a shared box is never written.
    fileprivate final class Storage: @unchecked Sendable {
        var url: URL
        var method: String
        var headers: [(name: String, value: String)]
        var body: Body
        var timeoutInterval: TimeInterval
        var totalTimeoutInterval: TimeInterval = 0
        var maximumDecompressedResponseSize = TransportRequest.defaultMaximumDecompressedResponseSize
        var maximumResponseSize = TransportRequest.defaultMaximumResponseSize
        var network = NetworkOptions()
        var opensFreshConnection = false

        init(url: URL, method: String, headers: [(name: String, value: String)], body: Body, timeoutInterval: TimeInterval) {
            (self.url, self.method, self.headers, self.body, self.timeoutInterval) = (url, method, headers, body, timeoutInterval)
        }

        func copy() -> Storage {
            let copy = Storage(url: url, method: method, headers: headers, body: body, timeoutInterval: timeoutInterval)
            copy.totalTimeoutInterval = totalTimeoutInterval
            copy.maximumDecompressedResponseSize = maximumDecompressedResponseSize
            copy.maximumResponseSize = maximumResponseSize
            copy.network = network
            copy.opensFreshConnection = opensFreshConnection
            return copy
        }
    }
}
