import Foundation

/// Every error FormDataKit throws or reports.
///
/// Each case carries what a user needs to act on it: the file path, the field name, the
/// string encoding, or the underlying system error number (`errno`).
public enum FormDataError: Error, Sendable, Equatable {
    /// The part of a field a string came from, for ``unencodableString(field:role:encoding:)``.
    public enum FieldRole: String, Sendable, Equatable {
        /// The field's name (its key).
        case name
        /// A value field's value.
        case value
        /// A file field's file name.
        case fileName
        /// A file field's content type.
        case contentType
    }

    /// No file exists at `path` (raised by `addFile`/`setFile`, or when the body is built).
    case fileNotFound(path: String)
    /// The file at `path` has a name whose bytes are not valid UTF-8; `path` shows each such byte
    /// as `\xFF` (and a backslash as `\\`). A Swift `String` cannot hold those bytes (it has
    /// U+FFFD in their place, naming no file), so the file cannot be sent: rename it (`convmv`),
    /// or read it yourself and add the bytes (`addData`). Raised where `fileNotFound` would be.
    case fileNameNotUTF8(path: String)
    /// `path` names a directory, not a file.
    case fileIsDirectory(path: String)
    /// `path` exists but is not a regular file (or a link to one): a FIFO, a device, a socket,
    /// or a file of a kernel file system such as `/proc` or `/sys`, whose size says nothing about
    /// its content. `kind` says which (`"FIFO"`, `"character device"`, `"procfs file"`…).
    /// Raised when the file is added (`addFile`, `appendPostDataFromFile`, AF's
    /// `appendPart(withFileURL:…)`), when the body is built, and when the file is opened to be
    /// sent (a FIFO put in its place later is refused, never waited on).
    case notARegularFile(path: String, kind: String)
    /// The file at `path` exists but could not be opened or read; `errno` says why.
    case fileUnreadable(path: String, errno: Int32)
    /// The file at `path` changed size after the body length was computed. Nothing was sent
    /// with a wrong length; rebuild the body to pick up the new contents.
    case fileChanged(path: String, expectedSize: UInt64, actualSize: UInt64)
    /// A string in field `field` cannot be represented in `encoding` (ASIHTTPRequest silently
    /// dropped such strings; FormDataKit refuses to build a wrong body).
    case unencodableString(field: String, role: FieldRole, encoding: String.Encoding)
    /// `encoding` is not usable for form bodies (it is not ASCII-compatible, e.g. UTF-16).
    case unsupportedEncoding(String.Encoding)
    /// The string encoding with raw value `rawValue` is not one FormDataKit can convert on this
    /// platform: neither one of Foundation's encodings it converts, nor a CoreFoundation encoding
    /// (`0x80000000 | CFStringEncoding`, as `CFStringConvertEncodingToNSStringEncoding` gives
    /// it) that the platform's converter serves exactly, nor one `String.Encoding.iana(_:)`
    /// returned. Choose the charset by its IANA name instead: `String.Encoding.iana("gb2312")`.
    /// (A sign-extended value, `0xFFFFFFFF8xxxxxxx` — what a negative literal such as
    /// `-2147483623` becomes — is read as the 32-bit `0x8xxxxxxx`, as CoreFoundation reads it;
    /// `rawValue` is the value as given.)
    /// The description names the CoreFoundation constant when it is one (such as
    /// `kCFStringEncodingMacChineseSimp`, which glibc's `iconv` has no converter for) and the
    /// closest IANA charset. Raised when the body is built (ASI code 6).
    case unknownEncoding(rawValue: UInt)
    /// A header value for field `field` contains CR, LF or NUL and would break the part headers.
    case invalidHeaderValue(field: String, value: String)
    /// The name or filename (`role`) of multipart field `field` ends in a backslash: inside
    /// `name="…\"` the backslash escapes the closing quote, and Werkzeug, PHP, Go, python-multipart
    /// and Python's `email` all read another part than was meant (a text field named
    /// `a"; filename=`, no file). Raised when the body is built; nothing is sent.
    case trailingBackslash(field: String, role: FieldRole)
    /// Request header `name` is not a valid header name (an RFC 9110 token), or its value
    /// contains CR, LF or NUL (header injection). Raised when the request is built or sent.
    case invalidRequestHeader(name: String, value: String)
    /// The request method is not an RFC 9110 token (a space, CR or LF would rewrite the request
    /// line). Raised by the send driver before anything is sent.
    case invalidRequestMethod(method: String)
    /// A request cookie's name is not a token, or its value has a byte outside RFC 6265's
    /// cookie-octets (CR, LF, `;`, a space…: it would inject headers or cookies).
    case invalidRequestCookie(name: String, value: String)
    /// A credential libcurl would put into a header (`field`: `username`, `password`, `domain`,
    /// `proxyUsername`, `proxyPassword`, `proxyDomain`) contains CR, LF or NUL. The value is not
    /// repeated in the error.
    case invalidCredential(field: String)
    /// The multipart boundary you set occurs inside the content of field `field`.
    /// (A generated boundary is regenerated instead.)
    case boundaryCollision(boundary: String, field: String)
    /// The request has both a raw body (`FormDataRequest.appendPostData(_:)`,
    /// `FormDataRequest.postBody`, `FormDataRequest.postBodyFilePath`) and form fields:
    /// only one can be the body. `field` names the first form field.
    case rawBodyWithFormFields(field: String)
    /// A temporary file could not be created, written, or removed. `operation` names the step.
    case temporaryFileFailed(path: String, operation: String, errno: Int32)
    /// zlib reported `code` while compressing (`message` is zlib's own text when it gave one).
    case compressionFailed(code: Int32, message: String)
    /// zlib reported `code` while decompressing, or the compressed data is corrupt or truncated.
    case decompressionFailed(code: Int32, message: String)
    /// Decompressed data grew past `limit` bytes (a decompression bomb, or a limit set too low).
    /// Nothing past the limit was produced.
    case decompressedSizeLimitExceeded(limit: UInt64)
    /// The file at `path` (a destination the caller named) could not be created, written or put
    /// in place; `errno` says why. No partial file is left at `path`.
    case fileUnwritable(path: String, errno: Int32)

    // MARK: - Streamed parts

    /// The stream of field `field` (``StreamedContent``; `body` for a raw body) did not give the
    /// `declaredLength` bytes it was added with: it ended after `streamedLength` bytes, or had
    /// more (`streamedLength` is then `declaredLength + 1`: reading stopped at the first extra
    /// byte). The send failed before a wrong body went out.
    case streamLengthMismatch(field: String, declaredLength: UInt64, streamedLength: UInt64)
    /// Reading the stream of field `field` failed: the `InputStream` reported an error, the
    /// async sequence threw, or the factory that makes it threw.
    case streamFailed(field: String, underlying: UnderlyingError)
    /// The body would be sent again (`reason`: a retry, a redirect, a challenge, a resumption)
    /// but the stream of field `field` was already read and cannot be read again. Add it with a
    /// factory (`makeStream`) so a fresh stream is made for each attempt, or send a file.
    case streamNotReplayable(field: String, reason: String)
    /// The server at `url` answered `411 Length Required` to a body of unknown length (sent
    /// chunked): declare the stream's length, or send a file.
    case lengthRequired(url: String)
    /// The transport `transport` cannot send a body with streamed parts (it does not take
    /// `TransportBodyForms.stream`); nothing was sent. Use `CurlTransport` or the
    /// AsyncHTTPClient transport.
    case transportCannotStream(transport: String)

    // MARK: - Sending (ASIHTTPRequest's error categories)

    /// The connection failed: refused, reset, DNS, TLS… (ASI code 1). `underlying` is the system error.
    case connectionFailure(underlying: UnderlyingError)
    /// No bytes were sent or received for `FormDataRequest.timeOutSeconds` (ASI code 2).
    case timedOut(underlying: UnderlyingError)
    /// The server answered 401 or 407 and no (or wrong) credentials were available (ASI code 3).
    case authenticationNeeded(underlying: UnderlyingError)
    /// The request was cancelled with `FormDataRequest.cancel()` or by task cancellation (ASI code 4).
    case cancelled
    /// The request could not be created, e.g. a URL that is not http or https (ASI code 5).
    case unableToCreateRequest(underlying: UnderlyingError)
    /// The body could not be built (ASI code 6); `underlying` is the build error (missing file,
    /// unencodable string, changed file…).
    indirect case internalErrorWhileBuilding(underlying: FormDataError)
    /// A temporary file could not be created, written or removed while sending (ASI code 8).
    indirect case fileManagement(underlying: FormDataError)
    /// Compressing the body or inflating the response failed (ASI code 11).
    indirect case compression(underlying: FormDataError)
    /// The request is already being sent; a request runs one send at a time.
    case requestInProgress
    /// The server redirected more times than allowed (ASI code 9, `ASITooMuchRedirectionErrorType`).
    case tooMuchRedirection(underlying: UnderlyingError)
    /// A redirect from `from` to `to` was not followed, for `reason` (e.g. https to http: the
    /// body and credentials would go out unencrypted). ASI code 9.
    case redirectRefused(from: String, to: String, reason: String)
    /// The response body grew past `limit` bytes (`FormDataRequest.maximumResponseSize`);
    /// receiving stopped there, so a hostile or broken server cannot exhaust memory (ASI code 1:
    /// the connection was dropped).
    case responseTooLarge(limit: UInt64)
    /// The request asked for HTTP/2 (``HTTPVersion/http2``) and the server at `url` did not
    /// choose it in the TLS handshake (or the URL is not https). Nothing was sent; not retried
    /// (ASI code 1).
    case httpVersionNotNegotiated(url: String, requested: HTTPVersion)

    // MARK: - Queue membership

    /// `NetworkQueue.addOperation(_:)` refused the request to `url`: it is already in a queue
    /// (this one or another, waiting or running), or `isRunning`: it is being sent. A request is
    /// in one queue at a time (`NSOperationQueue` raised for an operation already enqueued or
    /// executing); the queue is left as it was. ASI code 5.
    case requestAlreadyQueued(url: String, isRunning: Bool)

    // MARK: - The file owner (files FormDataKit creates)

    /// Something already exists at `path` — a file (whoever owns it), a symbolic link, a FIFO, a
    /// device — where FormDataKit was to create a new file of its own: a
    /// `FormDataRequest.temporaryFileDownloadPath` that exists, or one another download is
    /// using. FormDataKit never reuses a file: what is there was left untouched, and nothing was
    /// sent (ASI code 8, reported as ``fileManagement(underlying:)`` while sending).
    case fileExists(path: String)
}

/// The error beneath a sending failure, kept as plain values so ``FormDataError`` stays
/// `Sendable` and `Equatable`: the error domain and code (e.g. `NSURLErrorDomain`, -1001) and
/// its description.
public struct UnderlyingError: Sendable, Equatable, CustomStringConvertible {
    /// The error domain (`NSURLErrorDomain`, `NSPOSIXErrorDomain`, `HTTP`, `FormDataKit`).
    public let domain: String
    /// The code within ``domain`` (for `HTTP`, the status code).
    public let code: Int
    /// A human-readable description.
    public let message: String

    /// An underlying error with the given domain, code and message.
    /// - Parameters:
    ///   - domain: the error domain (`NSURLErrorDomain`, `NSPOSIXErrorDomain`, `HTTP`, `FormDataKit`).
    ///   - code: the code within `domain`.
    ///   - message: a human-readable description.
    public init(domain: String, code: Int, message: String) {
        self.domain = domain
        self.code = code
        self.message = message
    }

    /// The domain, code and message of any error (bridged through `NSError`).
    /// - Parameter error: any error; a ``FormDataError`` keeps its full description as the message.
    public init(_ error: any Error) {
        let ns = error as NSError
        // A FormDataError's localizedDescription is ASI's short text; keep its details.
        let message = error is FormDataError ? String(describing: error) : ns.localizedDescription
        self.init(domain: ns.domain, code: ns.code, message: message)
    }

    /// `message (domain code)`.
    public var description: String { "\(message) (\(domain) \(code))" }
}

extension FormDataError {
    /// The `ASINetworkErrorType` number of this error's category, for code that compares with
    /// ASIHTTPRequest's codes: 1 connection failure, 2 timed out, 3 authentication, 4 cancelled,
    /// 5 unable to create request, 6 internal error while building, 8 file management,
    /// 9 too much redirection (or a refused redirect), 11 compression. Build errors reported directly (without being wrapped) count as 6, 8 or 11.
    public var asiErrorCode: Int {
        switch self {
        case .connectionFailure: return 1
        case .timedOut: return 2
        case .authenticationNeeded: return 3
        case .cancelled: return 4
        case .unableToCreateRequest, .requestInProgress, .invalidRequestHeader, .invalidRequestMethod, .invalidRequestCookie,
            .invalidCredential, .requestAlreadyQueued, .streamNotReplayable, .lengthRequired, .transportCannotStream:
            return 5
        case .internalErrorWhileBuilding: return 6
        case .fileManagement, .temporaryFileFailed: return 8
        case .compression, .compressionFailed, .decompressionFailed, .decompressedSizeLimitExceeded: return 11
        case .fileUnwritable, .fileExists: return 8
        case .tooMuchRedirection, .redirectRefused: return 9
        case .responseTooLarge, .httpVersionNotNegotiated: return 1
        case .fileNotFound, .fileNameNotUTF8, .fileIsDirectory, .notARegularFile, .fileUnreadable, .fileChanged, .unencodableString,
            .unsupportedEncoding, .unknownEncoding, .invalidHeaderValue, .trailingBackslash, .boundaryCollision, .rawBodyWithFormFields,
            .streamLengthMismatch, .streamFailed:
            return 6
        }
    }

    /// Wraps a build error in the sending category ASIHTTPRequest used for it.
    package static func whileSending(_ error: FormDataError) -> FormDataError {
        switch error {
        case .temporaryFileFailed, .fileUnwritable, .fileExists: return .fileManagement(underlying: error)
        case .compressionFailed, .decompressionFailed, .decompressedSizeLimitExceeded: return .compression(underlying: error)
        case .connectionFailure, .timedOut, .authenticationNeeded, .cancelled, .unableToCreateRequest,
            .internalErrorWhileBuilding, .fileManagement, .compression, .requestInProgress, .invalidRequestHeader,
            .invalidRequestMethod, .invalidRequestCookie, .invalidCredential, .tooMuchRedirection, .redirectRefused, .responseTooLarge,
            .requestAlreadyQueued, .streamNotReplayable, .lengthRequired, .transportCannotStream, .httpVersionNotNegotiated:
            return error
        default: return .internalErrorWhileBuilding(underlying: error)
        }
    }
}

extension FormDataError: LocalizedError, CustomStringConvertible {
    /// ASIHTTPRequest's text for the category (``asiDescription``): what `localizedDescription`
    /// gives, as ported code shows it. The details are in ``description`` (and `failureReason`).
    public var errorDescription: String? { asiDescription }

    /// The full description with its details (``description``).
    public var failureReason: String? { description }

    /// What went wrong, with the path, field, encoding or underlying error concerned.
    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "No file exists at \(path)"
        case .fileNameNotUTF8(let path):
            return
                "The file \(path) has a name that is not valid UTF-8 (its bytes shown as \\xNN): a Swift String cannot name it, so it cannot be sent; rename it, or add its bytes with addData"
        case .fileIsDirectory(let path):
            return "The path \(path) is a directory, not a file"
        case .notARegularFile(let path, let kind):
            return "The path \(path) is a \(kind), not a regular file: only regular files (or links to one) can be sent"
        case .fileUnreadable(let path, let code):
            return "The file at \(path) could not be read: \(Self.systemMessage(code))"
        case .fileChanged(let path, let expected, let actual):
            return "The file at \(path) changed size from \(expected) to \(actual) bytes after the body length was computed"
        case .unencodableString(let field, let role, let encoding):
            return "The \(role.rawValue) of field '\(field)' cannot be represented in \(IANACharset.name(for: encoding) ?? "\(encoding)")"
        case .unsupportedEncoding(let encoding):
            return
                "The string encoding \(IANACharset.name(for: encoding) ?? "with raw value \(encoding.rawValue)") is not ASCII-compatible and cannot be used for form bodies"
        case .unknownEncoding(let rawValue):
            let hint = LegacyCharsets.unknownEncodingHint(rawValue)
            return
                "The string encoding with raw value 0x\(String(rawValue, radix: 16, uppercase: true))\(hint.constant.map { " (\($0))" } ?? "") is not one FormDataKit can convert on this platform: choose the charset by its IANA name with String.Encoding.iana(_:), e.g. .iana(\"\(hint.suggestion)\")"
        case .invalidHeaderValue(let field, let value):
            return "The header value \(value.debugDescription) for field '\(field)' contains CR, LF or NUL"
        case .trailingBackslash(let field, let role):
            return
                "The \(role.rawValue) of field \(field.debugDescription) ends in a backslash: sent in quotes it would escape the closing quote and parsers would read another part (Werkzeug, PHP, Go, python-multipart), so it is not sent"
        case .invalidRequestHeader(let name, let value):
            return
                "The request header \(name.debugDescription): \(value.debugDescription) is not allowed: a header name must be a token, and a value must not contain CR, LF or NUL"
        case .invalidRequestMethod(let method):
            return "The request method \(method.debugDescription) is not allowed: a method must be a token (no spaces, CR or LF)"
        case .invalidRequestCookie(let name, let value):
            return
                "The request cookie \(name.debugDescription)=\(value.debugDescription) is not allowed: a cookie name must be a token, and a value must be RFC 6265 cookie-octets"
        case .invalidCredential(let field):
            return "The credential \(field) contains CR, LF or NUL and would break the header it is sent in"
        case .boundaryCollision(let boundary, let field):
            return "The multipart boundary \(boundary) occurs in the content of field '\(field)'"
        case .rawBodyWithFormFields(let field):
            return
                "The request has a raw body (appendPostData, postBody or postBodyFilePath) and form field '\(field)': only one can be the body"
        case .temporaryFileFailed(let path, let operation, let code):
            return "Temporary file \(path): \(operation) failed: \(Self.systemMessage(code))"
        case .compressionFailed(let code, let message):
            return "Compression of data failed with code \(code)\(message.isEmpty ? "" : " (\(message))")"
        case .decompressionFailed(let code, let message):
            return "Decompression of data failed with code \(code)\(message.isEmpty ? "" : " (\(message))")"
        case .decompressedSizeLimitExceeded(let limit):
            return "Decompressed data exceeds the limit of \(limit) bytes"
        case .fileUnwritable(let path, let code):
            return "The file at \(path) could not be written: \(Self.systemMessage(code))"
        case .streamLengthMismatch(let field, let declared, let streamed):
            return streamed > declared
                ? "The stream of field '\(field)' has more than the \(declared) bytes declared: nothing more was sent"
                : "The stream of field '\(field)' ended after \(streamed) of the \(declared) bytes declared"
        case .streamFailed(let field, let underlying):
            return "Reading the stream of field '\(field)' failed: \(underlying)"
        case .streamNotReplayable(let field, let reason):
            return
                "The body cannot be sent again (\(reason)): the stream of field '\(field)' was already read; add it with makeStream to make a new stream for each attempt, or send a file"
        case .lengthRequired(let url):
            return
                "The server at \(url) answered 411 Length Required to a body of unknown length (sent chunked): declare the stream's length, or send a file"
        case .transportCannotStream(let transport):
            return "\(transport) cannot send a body with streamed parts: nothing was sent; use CurlTransport or AsyncHTTPClientTransport"
        case .connectionFailure(let underlying):
            return "A connection failure occurred: \(underlying)"
        case .timedOut(let underlying):
            return "The request timed out: \(underlying)"
        case .authenticationNeeded(let underlying):
            return "Authentication needed: \(underlying)"
        case .cancelled:
            return "The request was cancelled"
        case .unableToCreateRequest(let underlying):
            return "Unable to create request (bad url?): \(underlying)"
        case .internalErrorWhileBuilding(let underlying):
            return "Unable to build the request body: \(underlying)"
        case .fileManagement(let underlying):
            return "A temporary file could not be managed: \(underlying)"
        case .compression(let underlying):
            return "Compression failed: \(underlying)"
        case .requestInProgress:
            return "The request is already being sent"
        case .tooMuchRedirection(let underlying):
            return "The request failed because it redirected too many times: \(underlying)"
        case .redirectRefused(let from, let to, let reason):
            return "The redirect from \(from) to \(to) was not followed: \(reason)"
        case .responseTooLarge(let limit):
            return "The response body exceeds the limit of \(limit) bytes"
        case .httpVersionNotNegotiated(let url, let requested):
            return
                "The server at \(url) did not agree to HTTP/2 in the TLS handshake (ALPN), and httpVersion is .\(requested): nothing was sent (.automatic falls back to HTTP/1.1; h2c needs .http2PriorKnowledge)"
        case .requestAlreadyQueued(let url, let isRunning):
            return isRunning
                ? "The request to \(url) is being sent: a queue takes a request only when it is idle"
                : "The request to \(url) is already in a queue: a request is in one queue at a time"
        case .fileExists(let path):
            return
                "Something already exists at \(path): FormDataKit creates its files new and never writes into an existing one (it was left as it was)"
        }
    }

    /// The C library's text for an `errno` value.
    static func systemMessage(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}

extension FormDataError {
    /// A whole-file body (a spool or a compressed body) that could not be read when it was sent:
    /// ``fileManagement(underlying:)`` wrapping ``temporaryFileFailed(path:operation:errno:)``,
    /// whichever transport read it.
    /// - Parameters:
    ///   - path: the body file.
    ///   - code: the system error number.
    /// - Returns: the error.
    package static func bodyFileUnreadable(path: String, errno code: Int32) -> FormDataError {
        .fileManagement(underlying: .temporaryFileFailed(path: path, operation: "read body", errno: code))
    }
}
