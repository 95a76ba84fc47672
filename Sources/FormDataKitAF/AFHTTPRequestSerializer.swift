import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds `URLRequest`s the way AFNetworking's `AFHTTPRequestSerializer` did: default headers,
/// parameters as a query string (GET, HEAD, DELETE) or as an `application/x-www-form-urlencoded`
/// body, and multipart/form-data requests (see ``multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)``).
///
/// ```swift
/// let serializer = AFHTTPRequestSerializer.serializer()
/// serializer.setValue("secret", forHTTPHeaderField: "X-Token")
/// let request = try serializer.request(withMethod: "POST", urlString: "https://example.com/form",
///                                      parameters: ["key": "value"])
/// // body "key=value", Content-Type application/x-www-form-urlencoded
/// ```
///
/// Safe to share across threads: every setting is guarded by one lock (AFNetworking's KVO
/// property tracking was not). ``copy()`` copies every setting.
open class AFHTTPRequestSerializer: AFURLRequestSerialization, @unchecked Sendable {
    /// A query-string block: given the original request and the parameters, returns the query
    /// string (used raw, not escaped) or throws to fail the request.
    public typealias QueryStringSerialization = @Sendable (URLRequest, Any) throws -> String?

    let settings: Locked<AFSerializerSettings>
    /// The last URL string parsed (``AFURLParseMemo``).
    let urlParses = AFURLParseMemo()

    /// A serializer with the default headers (`Accept-Language`; AFNetworking's `User-Agent` on
    /// Apple platforms — none on Linux, as AFNetworking, where the managers and operations send
    /// `FormDataRequest.defaultUserAgentString` instead), UTF-8, and parameters in the URI for
    /// GET, HEAD and DELETE.
    public required init() {
        settings = Locked(AFSerializerSettings(headers: AFDefaultHeaders.make()))
    }

    /// A new serializer (AFNetworking's `+serializer`).
    /// - Returns: a serializer with the default headers and settings.
    open class func serializer() -> Self { Self.init() }

    /// A copy with every setting of this serializer: headers, encoding, request properties, URI
    /// methods, query style or block, and the subclass's options. (AFNetworking's copy lost the
    /// encoding, the URI methods and the request properties.)
    /// - Returns: the copy, independent of this serializer.
    public func copy() -> Self {
        let copy = Self.init()
        let current = settings.current
        copy.settings.withLock { $0 = current }
        return copy
    }

    // MARK: - Settings

    /// The encoding of url-encoded bodies and of multipart parameter values; UTF-8 by default.
    public var stringEncoding: String.Encoding {
        get { settings.withLock { $0.stringEncoding } }
        set { settings.withLock { $0.stringEncoding = newValue } }
    }

    /// Whether ``AFHTTPSessionManager`` sends the bodies of the requests it builds with this
    /// serializer gzip-compressed, with `Content-Encoding: gzip` (FormDataKit's addition, as
    /// ASIHTTPRequest's `shouldCompressRequestBody`; AFNetworking had none). The server must
    /// inflate request bodies (Apache: `SetInputFilter DEFLATE`). False by default. The
    /// `URLRequest`s this serializer returns are unchanged: the body is compressed when sent.
    public var shouldCompressRequestBody: Bool {
        get { settings.withLock { $0.shouldCompressRequestBody } }
        set { settings.withLock { $0.shouldCompressRequestBody = newValue } }
    }

    /// Whether every request this serializer makes gets an `Idempotency-Key` of its own (a quoted
    /// random UUID, `IdempotencyKey.make()`) unless it has one; false by default (FormDataKit's
    /// addition). The key is in the returned `URLRequest`, so every send of it — a retry under the
    /// manager's ``AFHTTPSessionManager/retryPolicy``, a redirect or challenge answered by sending
    /// again — carries the same key, and a POST with a key may be retried after its body went out.
    public var shouldSendIdempotencyKey: Bool {
        get { settings.withLock { $0.shouldSendIdempotencyKey } }
        set { settings.withLock { $0.shouldSendIdempotencyKey = newValue } }
    }

    /// When set, every request made by ``request(withMethod:urlString:parameters:)`` gets this
    /// `allowsCellularAccess`; nil (the default) leaves the request's own default.
    public var allowsCellularAccess: Bool? {
        get { settings.withLock { $0.allowsCellularAccess } }
        set { settings.withLock { $0.allowsCellularAccess = newValue } }
    }

    /// When set, every request made gets this cache policy; nil leaves the request's default.
    public var cachePolicy: URLRequest.CachePolicy? {
        get { settings.withLock { $0.cachePolicy } }
        set { settings.withLock { $0.cachePolicy = newValue } }
    }

    /// When set, every request made gets this `httpShouldHandleCookies`; nil leaves the default.
    public var httpShouldHandleCookies: Bool? {
        get { settings.withLock { $0.httpShouldHandleCookies } }
        set { settings.withLock { $0.httpShouldHandleCookies = newValue } }
    }

    /// When set, every request made gets this `httpShouldUsePipelining`; nil leaves the default
    /// (which is `true` on Linux, `false` on Apple platforms).
    public var httpShouldUsePipelining: Bool? {
        get { settings.withLock { $0.httpShouldUsePipelining } }
        set { settings.withLock { $0.httpShouldUsePipelining = newValue } }
    }

    /// When set, every request made gets this network service type; nil leaves the default.
    public var networkServiceType: URLRequest.NetworkServiceType? {
        get { settings.withLock { $0.networkServiceType } }
        set { settings.withLock { $0.networkServiceType = newValue } }
    }

    /// When set, every request made gets this timeout; nil leaves the default (60 s).
    public var timeoutInterval: TimeInterval? {
        get { settings.withLock { $0.timeoutInterval } }
        set { settings.withLock { $0.timeoutInterval = newValue } }
    }

    /// The methods whose parameters go into the URL's query instead of the body; `GET`, `HEAD`
    /// and `DELETE` by default. Entries must be uppercase (the request's method is uppercased).
    public var httpMethodsEncodingParametersInURI: Set<String> {
        get { settings.withLock { $0.methodsEncodingParametersInURI } }
        set { settings.withLock { $0.methodsEncodingParametersInURI = newValue } }
    }

    /// A fixed multipart boundary for every multipart request (for byte-exact tests and
    /// pre-built bodies); nil (the default) makes a new random `Boundary+XXXXXXXXXXXXXXXX` per
    /// request, as AFNetworking did. A FormDataKit addition.
    public var multipartBoundary: String? {
        get { settings.withLock { $0.multipartBoundary } }
        set { settings.withLock { $0.multipartBoundary = newValue } }
    }

    // MARK: - Headers

    /// A snapshot of the headers applied to every request (names exactly as set).
    public var httpRequestHeaders: [String: String] { settings.withLock { $0.headers } }

    /// Sets the default header `field` to `value`; nil removes it. Names are kept as given
    /// (case-sensitive), as in AFNetworking.
    /// - Parameters:
    ///   - value: the header's value; nil removes the header.
    ///   - field: the header's name.
    public func setValue(_ value: String?, forHTTPHeaderField field: String) {
        settings.withLock { $0.headers[field] = value }
    }

    /// The default header stored under exactly `field`, or nil.
    /// - Parameter field: the header's name, exactly as set.
    /// - Returns: its value, or nil.
    public func value(forHTTPHeaderField field: String) -> String? {
        settings.withLock { $0.headers[field] }
    }

    /// Sets `Authorization: Basic <base64 of "username:password" in UTF-8>`.
    /// - Parameters:
    ///   - username: the user name.
    ///   - password: the password.
    public func setAuthorizationHeaderFieldWithUsername(_ username: String, password: String) {
        let token = Data("\(username):\(password)".utf8).base64EncodedString()
        setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
    }

    /// Removes the `Authorization` header.
    public func clearAuthorizationHeader() {
        setValue(nil, forHTTPHeaderField: "Authorization")
    }

    // MARK: - Query string serialization

    /// Uses the built-in flattening `style` and removes any query-string block.
    /// - Parameter style: the flattening style (AFNetworking's only one is the default).
    public func setQueryStringSerializationWith(_ style: AFHTTPRequestQueryStringSerializationStyle) {
        settings.withLock {
            $0.queryStringStyle = style
            $0.queryStringBlock = nil
        }
    }

    /// Uses `block` to make query strings (nil returns to the built-in style). The block is called
    /// for every non-nil parameters value, an empty dictionary included; what it throws is
    /// thrown by the request method unchanged.
    /// - Parameter block: makes the query string of a request's parameters; nil for the built-in style.
    public func setQueryStringSerializationWith(_ block: QueryStringSerialization?) {
        settings.withLock { $0.queryStringBlock = block }
    }

    // MARK: - Building requests

    /// A `method` request to `urlString` (parsed as `NSURL` parses it; relative strings are
    /// allowed) with the request properties that were set, the default headers, and `parameters`
    /// encoded by ``request(bySerializingRequest:withParameters:)``.
    ///
    /// - Throws: ``AFURLRequestSerializationError/invalidURLString(_:)`` for a string that is not
    ///   a URL, `FormDataError.invalidRequestHeader` for a header (set with
    ///   ``setValue(_:forHTTPHeaderField:)``) whose name is not a token or whose value has CR, LF
    ///   or NUL, and whatever serializing the parameters throws.
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - urlString: the URL, absolute or relative.
    ///   - parameters: the parameters (a dictionary, an array or a set), nil for none.
    /// - Returns: the request.
    open func request(withMethod method: String, urlString: String, parameters: Any?) throws -> URLRequest {
        guard let url = urlParses.url(urlString) else { throw AFURLRequestSerializationError.invalidURLString(urlString) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        settings.current.applyRequestProperties(to: &request)
        return try self.request(bySerializingRequest: request, withParameters: parameters)
    }

    /// `request` with the default headers it lacks and `parameters` encoded: appended to the URL's
    /// query for the methods in ``httpMethodsEncodingParametersInURI``, otherwise as the body
    /// (`application/x-www-form-urlencoded` unless a Content-Type is set; an empty body for nil
    /// parameters).
    /// - Parameters:
    ///   - request: the request to complete.
    ///   - parameters: the parameters, nil for none.
    /// - Returns: the completed request.
    /// - Throws: what the query-string block throws, `FormDataError.unencodableString` for a value
    ///   ``stringEncoding`` cannot represent, or `FormDataError.invalidRequestHeader` for a bad header.
    open func request(bySerializingRequest request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        let current = settings.current
        var result = current.withDefaultHeaders(request)
        // Header injection: a name that is not a token, or a value with CR, LF or NUL, is refused
        // here (setValue(_:forHTTPHeaderField:) cannot throw). The serializer's own headers are
        // checked as set: URLRequest may rewrite or drop a bad one silently.
        try RequestHeaderValidation.requireValid(current.headers)
        try RequestHeaderValidation.requireValid(result.allHTTPHeaderFields ?? [:])
        var query: String?
        if let parameters {
            if let block = current.queryStringBlock {
                query = try block(request, parameters)
            } else {
                switch current.queryStringStyle {
                case .defaultStyle: query = AFQueryString.make(from: parameters)
                }
            }
        }
        if current.encodesParametersInURI(request) {
            if let query, !query.isEmpty, let url = result.url {
                let separator = NSURL(string: url.absoluteString)?.query != nil ? "&" : "?"
                let combined = url.absoluteString + separator + query
                guard let newURL = NSURL(string: combined) else {
                    throw AFURLRequestSerializationError.invalidURLString(combined)
                }
                result.url = newURL as URL
            }
        } else {
            let body = query ?? ""
            if result.value(forHTTPHeaderField: "Content-Type") == nil {
                result.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
            // The query string is percent-escaped ASCII; the charset converter (iconv for the
            // legacy charsets) handles every encoding the multipart path does.
            guard let data = IANACharset.encode(body, current.stringEncoding) else {
                throw FormDataError.unencodableString(field: "(query string)", role: .value, encoding: current.stringEncoding)
            }
            result.httpBody = data
        }
        return result
    }
}
