import Foundation

/// Something that sends one HTTP request and reports what happens, by callbacks.
///
/// ``FormDataRequest`` builds a ``TransportRequest`` and hands it to its transport;
/// ``URLSessionTransport`` (FoundationNetworking's `URLSession`) is the default. Callbacks are
/// plain functions rather than `async` so that ``FormDataRequest/startSynchronous()`` can block
/// any thread — including the main thread in top-level code — without deadlocking.
public protocol FormDataTransport: Sendable {
    /// Starts sending `request` and reports its progress, response head and completion to
    /// `observer`. `observer` is called on the transport's own threads, one call at a time per
    /// request; ``TransportObserver/transportDidComplete(_:)`` is called exactly once, last.
    /// - Returns: a handle that cancels the send.
    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask

    /// The forms of body this transport can send (see ``TransportBodyForms``). A request's body
    /// is turned into one of them when it is sent, by ``BodyDelivery``: a transport that takes
    /// ``TransportBodyForms/stream`` gets the encoded body unspooled, whatever its size.
    /// `[.bytes, .file]` by default.
    var acceptedBodyForms: TransportBodyForms { get }

    /// Bodies up to this many bytes that are not streamed are handed over in memory (read
    /// straight from their parts); larger ones as a spooled temporary file. ``BodyDelivery/defaultInMemoryLimit``
    /// (1 MiB) by default.
    var inMemoryBodyLimit: UInt64 { get }

    /// Whether this transport sends ``TransportRequest/network``'s credentials itself and answers
    /// authentication challenges (Digest, NTLM) with them. When false, ``FormDataRequest`` sends
    /// Basic credentials in an `Authorization` header of its own. False by default.
    var answersAuthenticationChallenges: Bool { get }
}

extension FormDataTransport {
    /// `[.bytes, .file]`: the transport is given bodies in memory or in a file.
    public var acceptedBodyForms: TransportBodyForms { [.bytes, .file] }
    /// ``BodyDelivery/defaultInMemoryLimit``.
    public var inMemoryBodyLimit: UInt64 { BodyDelivery.defaultInMemoryLimit }
    /// Whether ``acceptedBodyForms`` includes ``TransportBodyForms/stream``: the transport reads
    /// a body's segments itself as it sends them, so nothing is spooled for it.
    public var streamsBodySource: Bool { acceptedBodyForms.contains(.stream) }
    /// False: credentials reach the transport as an `Authorization: Basic` header.
    public var answersAuthenticationChallenges: Bool { false }
}

/// The forms in which a transport can take a request body (``TransportRequest/Body``).
public struct TransportBodyForms: OptionSet, Sendable, Hashable {
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

/// A send in flight, returned by ``FormDataTransport/start(_:observer:)``.
public protocol TransportTask: Sendable {
    /// Cancels the send; the observer then completes with ``FormDataError/cancelled``
    /// (unless the send already finished).
    func cancel()
}

/// Receives what happens to one send. Calls for one send never overlap.
public protocol TransportObserver: Sendable {
    /// Body bytes went out: `bytesSent` just now, `totalBytesSent` so far, of `totalBytesExpected`
    /// (0 when the transport does not know).
    func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64)
    /// The response head arrived (before the body).
    func transportDidReceiveResponse(_ head: TransportResponseHead)
    /// The send ended: the complete response, or the error (already in ``FormDataError``'s
    /// sending categories).
    func transportDidComplete(_ result: Result<FormDataResponse, FormDataError>)
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

        /// The number of bytes the body has.
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

    /// The URL to send to.
    public var url: URL
    /// The HTTP method.
    public var method: String
    /// Header fields, in the order they are set. `Content-Length` is never among them: the
    /// transport derives it from the body.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body
    /// Seconds without any bytes sent or received before the send fails with
    /// ``FormDataError/timedOut(underlying:)``; 0 or less means no timeout.
    public var timeoutInterval: TimeInterval
    /// The largest response body accepted once a `Content-Encoding` (gzip) is undone; a
    /// transport stops receiving when a decoded body grows past it and completes with
    /// ``FormDataError/compression(underlying:)`` wrapping
    /// ``FormDataError/decompressedSizeLimitExceeded(limit:)``. 256 MiB unless set.
    public var maximumDecompressedResponseSize: UInt64 = TransportRequest.defaultMaximumDecompressedResponseSize
    /// The largest response body accepted as it arrives, before any decoding; a transport that
    /// enforces it stops receiving past it and completes with
    /// ``FormDataError/responseTooLarge(limit:)``. 256 MiB unless set.
    public var maximumResponseSize: UInt64 = TransportRequest.defaultMaximumResponseSize
    /// Authentication, proxy, bandwidth, TLS and cookie settings (see ``NetworkOptions`` for
    /// which transports apply which).
    public var network = NetworkOptions()

    /// A request with all its parts.
    /// - Parameters:
    ///   - url: where to send it.
    ///   - method: the HTTP method, as it goes out.
    ///   - headers: the header fields in order (a `Content-Length` among them is ignored).
    ///   - body: the body, in a form the transport takes (see ``FormDataTransport/acceptedBodyForms``).
    ///   - timeoutInterval: seconds without progress before ``FormDataError/timedOut(underlying:)``;
    ///     0 or less: none.
    public init(url: URL, method: String, headers: [(name: String, value: String)], body: Body, timeoutInterval: TimeInterval) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeoutInterval = timeoutInterval
    }

    /// The value of header `name` (compared case-insensitively), or nil.
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value (the last one set, for a request), or nil when there is none.
    public func header(_ name: String) -> String? {
        headers.last { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Requests are equal when every part is equal (headers in order).
    public static func == (lhs: TransportRequest, rhs: TransportRequest) -> Bool {
        lhs.url == rhs.url && lhs.method == rhs.method && lhs.body == rhs.body
            && lhs.timeoutInterval == rhs.timeoutInterval
            && lhs.maximumDecompressedResponseSize == rhs.maximumDecompressedResponseSize
            && lhs.maximumResponseSize == rhs.maximumResponseSize
            && lhs.network == rhs.network
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// The head of a response: status and headers.
public struct TransportResponseHead: Sendable, Equatable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers (names as the server sent them; a repeated name is joined with `, `).
    public var headers: [String: String]
    /// The server's own reason phrase (`Not Found` in `HTTP/1.1 404 Not Found`), when the
    /// transport sees the status line (the curl transport does; URLSession does not).
    public var reasonPhrase: String?

    /// A head with `statusCode`, `headers` and the server's `reasonPhrase` if known.
    /// - Parameters:
    ///   - statusCode: the HTTP status code.
    ///   - headers: the response headers.
    ///   - reasonPhrase: the server's own reason phrase, nil when the transport does not see it.
    public init(statusCode: Int, headers: [String: String], reasonPhrase: String? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.reasonPhrase = reasonPhrase
    }

    /// The status line ASIHTTPRequest's `responseStatusMessage` held, e.g. `HTTP/1.1 404 Not Found`:
    /// with the server's reason phrase when the transport saw it, else the standard one for the code.
    public var statusLine: String {
        let reason = reasonPhrase ?? HTTPReasonPhrase.phrase(for: statusCode)
        return reason.isEmpty ? "HTTP/1.1 \(statusCode)" : "HTTP/1.1 \(statusCode) \(reason)"
    }

    /// The value of header `name`, compared case-insensitively.
    /// - Parameter name: the header's name, in any case.
    /// - Returns: its value (the last one set, for a request), or nil when there is none.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
