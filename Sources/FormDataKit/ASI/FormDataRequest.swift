import Foundation
import Logging

/// A form upload in ASIHTTPRequest's `ASIFormDataRequest` shape: collect post values and files,
/// and the body is built lazily — URL-encoded, or multipart when files are present — kept in
/// memory or spooled to a private temporary file.
///
/// ```swift
/// let request = FormDataRequest(url: URL(string: "https://example.com/upload")!)
/// request.setPostValue("Ben", forKey: "first_name")
/// try request.addFile("/tmp/photo.jpg", forKey: "photo")
/// try request.buildPostBody()
/// print(request.postLength, request.requestHeaders["Content-Type"]!)
/// ```
///
/// Thread-safe: every property is guarded by a lock. Any change after a build marks the body
/// stale, and the next build rebuilds it (ASIHTTPRequest silently kept the old body). Temporary
/// files are removed on rebuild and when the request is released.
public final class FormDataRequest: Sendable {
    let state: Locked<RequestState>
    let sending = Locked(SendingState())

    // MARK: - Creating a request

    /// A request to `url`, method `POST`, URL-encoded, UTF-8.
    /// - Parameter url: where the request goes.
    public init(url: URL) {
        state = Locked(RequestState(url: url))
    }

    /// A new request to `url` (ASIHTTPRequest's `+requestWithURL:`).
    /// - Parameter url: where the request goes.
    /// - Returns: a new request.
    public class func request(with url: URL) -> FormDataRequest {
        FormDataRequest(url: url)
    }

    // MARK: - Process-wide settings

    private static let debugSwitch = Locked(false)
    static let logger = Logger(label: "FormDataKit.FormDataRequest")

    /// Turns the debug body log on for every request (ASIHTTPRequest's `DEBUG_FORM_DATA_REQUEST`).
    /// When on, each build fills ``debugBodyString``, writes it to standard error, and emits it
    /// through swift-log at debug level (label `FormDataKit.FormDataRequest`).
    public static var debugFormDataRequests: Bool {
        get { debugSwitch.current }
        set { debugSwitch.withLock { $0 = newValue } }
    }

    // MARK: - Request settings

    /// The URL the request is sent to.
    public var url: URL {
        get { state.withLock { $0.url } }
        set { state.withLock { $0.url = newValue } }
    }

    /// The HTTP method; `POST` by default. When the body is not empty, `GET`, `DELETE` and `HEAD`
    /// become `POST` at build time; `PUT` and other methods are kept.
    public var requestMethod: String {
        get { state.withLock { $0.effectiveMethod } }
        set { mutateBody { $0.requestMethod = newValue } }
    }

    /// The body format; `.urlEncoded` by default. Reads `.multipartFormData` after a build of a
    /// form that has files (files force multipart).
    public var postFormat: PostFormat {
        get { state.withLock { $0.built?.hasFiles == true ? .multipartFormData : $0.postFormat } }
        set { mutateBody { $0.postFormat = newValue } }
    }

    /// The encoding of every string written into the body (and its `charset=`); UTF-8 by default.
    /// Must be ASCII-compatible (UTF-16 and UTF-32 are refused at build time).
    public var stringEncoding: String.Encoding {
        get { state.withLock { $0.stringEncoding } }
        set { mutateBody { $0.stringEncoding = newValue } }
    }

    /// Whether the body is written to a temporary file rather than kept in memory. Forced on by a
    /// build when the form has files.
    public var shouldStreamPostDataFromDisk: Bool {
        get { state.withLock { $0.built?.hasFiles == true || $0.shouldStreamPostDataFromDisk } }
        set { mutateBody { $0.shouldStreamPostDataFromDisk = newValue } }
    }

    /// Whether the body is gzip-compressed before sending. Off by default.
    ///
    /// When on, a build compresses the encoded body in one pass straight from its parts (nothing
    /// is spooled uncompressed): bodies that would be spooled (forms with files,
    /// ``shouldStreamPostDataFromDisk``) or over 1 MiB go to a private temporary file,
    /// ``compressedPostBodyFilePath`` (``postBodyFilePath`` is then nil), smaller ones to
    /// ``compressedPostBody``. ``postBody`` still holds the uncompressed bytes of a body not
    /// streamed from disk, as in ASIHTTPRequest. ``postLength`` and `Content-Length` are the
    /// compressed size; `Content-Encoding: gzip` is set only when there is a body (ASIHTTPRequest
    /// set it even without one). The server must inflate gzip request bodies (PHP does not).
    public var shouldCompressRequestBody: Bool {
        get { state.withLock { $0.shouldCompressRequestBody } }
        set { mutateBody { $0.shouldCompressRequestBody = newValue } }
    }

    /// The deflate level for a compressed body: -1 (zlib's default) or 0 (stored) to 9
    /// (smallest, slowest). 6 by default, ASIHTTPRequest's level. Another value fails the build
    /// with `FormDataError.compressionFailed(code:message:)`.
    public var compressionLevel: Int32 {
        get { state.withLock { $0.compressionLevel } }
        set { mutateBody { $0.compressionLevel = newValue } }
    }

    /// Whether a compressed body stores parts that are already compressed (JPEG, PNG, MP4, ZIP,
    /// … — see `AlreadyCompressedTypes`) at level 0 inside the same gzip stream, instead of
    /// spending CPU deflating them for nothing. On by default; the output inflates to the same
    /// bytes either way.
    public var adaptiveCompression: Bool {
        get { state.withLock { $0.adaptiveCompression } }
        set { mutateBody { $0.adaptiveCompression = newValue } }
    }

    /// How many threads compress the body: 0 (the default) chooses — one thread for bodies under
    /// 4 MiB or with one active processor, else one worker per active processor (at most 8); 1
    /// always uses one; n ≥ 2 asks for n for any body size, never more than the active
    /// processors (`ProcessInfo.activeProcessorCount`) nor the body's 256 KiB blocks.
    ///
    /// One thread writes a single zlib gzip stream, as ASIHTTPRequest did. More compress it
    /// pigz-style: 256 KiB blocks, each deflated primed with the 32 KiB before it, joined into one
    /// gzip member with a combined CRC-32 — it inflates to the same bytes (the compressed bytes
    /// differ by a few per block). Memory stays bounded either way. A negative value fails the
    /// build with `FormDataError.compressionFailed(code:message:)`.
    public var compressionThreads: Int {
        get { state.withLock { $0.compressionThreads } }
        set { mutateBody { $0.compressionThreads = newValue } }
    }

    /// Turns the debug body log on for this request only (see ``debugFormDataRequests``).
    public var shouldLogDebugBody: Bool {
        get { state.withLock { $0.shouldLogDebugBody } }
        set { mutateBody { $0.shouldLogDebugBody = newValue } }
    }

    /// Value fields whose values the debug body log (``debugBodyString`` and the log output)
    /// shows as `[redacted]` — passwords, tokens. Empty by default: the log shows every value, as
    /// ASIHTTPRequest's did. The body itself is unchanged.
    public var debugBodyRedactedFields: Set<String> {
        get { state.withLock { $0.debugBodyRedactedFields } }
        set { mutateBody { $0.debugBodyRedactedFields = newValue } }
    }

    /// The multipart boundary: `0xKhTmLbOuNdArY-` + an uppercase UUID, random per request. Set it
    /// to fix the bytes (tests do); a boundary you set that occurs in any content — values, data
    /// parts, and file parts, which are then read once at build time to check — is
    /// `FormDataError.boundaryCollision(boundary:field:)`; a generated one is replaced by a new
    /// one when it occurs in in-memory content (files are not read for it: 122 random bits).
    public var multipartBoundary: String {
        get { state.withLock { $0.built?.boundary ?? $0.boundary } }
        set {
            mutateBody {
                $0.boundary = newValue
                $0.boundaryIsCustom = true
            }
        }
    }

    // MARK: - Headers

    /// The request headers: yours, plus `Content-Type` and `Content-Length` (and
    /// `Content-Encoding: gzip`) once the body is built, as ASIHTTPRequest showed them. Keys are
    /// case-sensitive, as in ASIHTTPRequest.
    ///
    /// The build's headers are not stored among yours: they are added when the request is sent
    /// and follow the body (a rebuild changes them; a stale body shows none). Setting this
    /// property to a dictionary read from it keeps only your own headers.
    public var requestHeaders: [String: String] {
        get { state.withLock { $0.effectiveHeaders } }
        set {
            state.withLock { state in
                var own = newValue
                // The build's headers read back through the getter are not the caller's.
                for header in state.built?.headers ?? [] where own[header.name] == header.value { own[header.name] = nil }
                state.requestHeaders = own
            }
        }
    }

    /// Sets header `header` to `value`, replacing an entry with exactly the same name.
    /// - Parameters:
    ///   - header: the header's name (case-sensitive key, as in ASIHTTPRequest).
    ///   - value: its value; checked for CR, LF and NUL at build and send.
    public func addRequestHeader(_ header: String, value: String) {
        state.withLock { $0.requestHeaders[header] = value }
    }

    // MARK: - Post values

    /// Appends a value field. A nil key is ignored; a nil value is sent empty. The value is sent
    /// as its description: `Bool` → `1`/`0`, numbers plainly, dates as `2026-11-22 03:57:10 +0000`.
    /// - Parameters:
    ///   - value: the value; nil is sent empty.
    ///   - key: the field name; nil adds nothing.
    public func addPostValue(_ value: Any?, forKey key: String?) {
        guard let key else { return }
        let text = PostValueRendering.render(value)
        mutateBody { $0.form.addValue(text, forName: key) }
    }

    /// Removes every value field named `key`, then appends this one (so it moves to the end).
    /// - Parameters:
    ///   - value: the value, rendered as ``addPostValue(_:forKey:)`` renders it; nil is sent empty.
    ///   - key: the field name; nil changes nothing.
    public func setPostValue(_ value: Any?, forKey key: String?) {
        guard let key else { return }
        let text = PostValueRendering.render(value)
        mutateBody { $0.form.setValue(text, forName: key) }
    }

    // MARK: - Files and data

    /// Appends the file at `filePath` as a file field, named after its last path component and
    /// typed from its extension. A missing file, a directory, or anything but a regular file (a
    /// FIFO, a device, a socket, a `/proc` file) throws at once.
    /// - Parameters:
    ///   - filePath: the file to send, read when the body is built.
    ///   - key: the field name.
    /// - Throws: `FormDataError.fileNotFound(path:)`, `FormDataError.fileIsDirectory(path:)` or
    ///   `FormDataError.notARegularFile(path:kind:)` (a FIFO, a device, a socket, a `/proc` file).
    public func addFile(_ filePath: String, forKey key: String) throws {
        try addFile(filePath, withFileName: nil, andContentType: nil, forKey: key)
    }

    /// Appends the file at `filePath` as a file field, read when the body is built. A file whose
    /// name is not valid UTF-8 (the `String` has U+FFFD for its bytes) throws
    /// `FormDataError.fileNameNotUTF8(path:)` naming the bytes. Its size is recorded now: a build
    /// finds the file deleted (`FormDataError.fileNotFound(path:)`) or of another size
    /// (`FormDataError.fileChanged(path:expectedSize:actualSize:)`) and fails, sending nothing;
    /// add the file again to send its new contents.
    /// - Parameters:
    ///   - filePath: the file to send.
    ///   - fileName: the `filename` sent; nil: the path's last component.
    ///   - contentType: the part's type; nil: from the extension (``mimeType(forFileAtPath:)``).
    ///   - key: the field name.
    /// - Throws: `FormDataError.fileNotFound(path:)`, `FormDataError.fileIsDirectory(path:)` or
    ///   `FormDataError.notARegularFile(path:kind:)` (a FIFO, a device, a socket, a `/proc` file).
    public func addFile(_ filePath: String, withFileName fileName: String?, andContentType contentType: String?, forKey key: String) throws
    {
        let field = try Self.fileField(filePath, fileName: fileName, contentType: contentType, key: key)
        mutateBody { $0.form.addFile(field) }
    }

    /// Removes every file or data field named `key`, then appends the file at `filePath`.
    /// - Parameters:
    ///   - filePath: the file to send.
    ///   - key: the field name.
    /// - Throws: `FormDataError.fileNotFound(path:)`, `FormDataError.fileIsDirectory(path:)` or
    ///   `FormDataError.notARegularFile(path:kind:)` (a FIFO, a device, a socket, a `/proc` file)
    ///   (nothing is removed then).
    public func setFile(_ filePath: String, forKey key: String) throws {
        try setFile(filePath, withFileName: nil, andContentType: nil, forKey: key)
    }

    /// Removes every file or data field named `key`, then appends the file at `filePath`.
    /// - Parameters:
    ///   - filePath: the file to send.
    ///   - fileName: the `filename` sent; nil: the path's last component.
    ///   - contentType: the part's type; nil: from the extension.
    ///   - key: the field name.
    /// - Throws: `FormDataError.fileNotFound(path:)`, `FormDataError.fileIsDirectory(path:)` or
    ///   `FormDataError.notARegularFile(path:kind:)` (a FIFO, a device, a socket, a `/proc` file)
    ///   (nothing is removed then).
    public func setFile(_ filePath: String, withFileName fileName: String?, andContentType contentType: String?, forKey key: String) throws
    {
        let field = try Self.fileField(filePath, fileName: fileName, contentType: contentType, key: key)
        mutateBody { $0.form.setFile(field) }
    }

    /// Appends `data` as a file field with file name `file` and type `application/octet-stream`.
    /// Nil data is sent as an empty part.
    /// - Parameters:
    ///   - data: the bytes; nil sends an empty part.
    ///   - key: the field name.
    public func addData(_ data: Data?, forKey key: String) {
        addData(data, withFileName: nil, andContentType: nil, forKey: key)
    }

    /// Appends `data` as a file field.
    /// - Parameters:
    ///   - data: the bytes; nil sends an empty part.
    ///   - fileName: the `filename` sent; nil: `file`.
    ///   - contentType: the part's type; nil: `application/octet-stream`.
    ///   - key: the field name.
    public func addData(_ data: Data?, withFileName fileName: String?, andContentType contentType: String?, forKey key: String) {
        let field = Self.dataField(data, fileName: fileName, contentType: contentType, key: key)
        mutateBody { $0.form.addFile(field) }
    }

    /// Removes every file or data field named `key`, then appends `data`.
    /// - Parameters:
    ///   - data: the bytes; nil sends an empty part.
    ///   - key: the field name.
    public func setData(_ data: Data?, forKey key: String) {
        setData(data, withFileName: nil, andContentType: nil, forKey: key)
    }

    /// Removes every file or data field named `key`, then appends `data`.
    /// - Parameters:
    ///   - data: the bytes; nil sends an empty part.
    ///   - fileName: the `filename` sent; nil: `file`.
    ///   - contentType: the part's type; nil: `application/octet-stream`.
    ///   - key: the field name.
    public func setData(_ data: Data?, withFileName fileName: String?, andContentType contentType: String?, forKey key: String) {
        let field = Self.dataField(data, fileName: fileName, contentType: contentType, key: key)
        mutateBody { $0.form.setFile(field) }
    }

    /// The fields collected so far.
    public var form: Form { state.withLock { $0.form } }

    // MARK: - MIME types

    /// The MIME type for the file at `path` from its extension (case-insensitive): nil when no file
    /// exists there; `application/octet-stream` for no or an unknown extension.
    /// - Parameter path: the file's path.
    /// - Returns: the type, or nil when no file exists at `path`.
    public static func mimeType(forFileAtPath path: String) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return MIMETypes.type(forFileName: path)
    }

    // MARK: - Private helpers

    private static func fileField(_ path: String, fileName: String?, contentType: String?, key: String) throws -> FormFileField {
        let size = try FileInspection.regularFileSize(at: path)
        // The path names a regular file (checked above), so it does not end in "/".
        let name = fileName ?? path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        return FormFileField(
            name: key, fileName: name, contentType: contentType ?? MIMETypes.type(forFileName: path),
            content: .file(path: path), sizeWhenAdded: size)
    }

    private static func dataField(_ data: Data?, fileName: String?, contentType: String?, key: String) -> FormFileField {
        FormFileField(
            name: key, fileName: fileName ?? "file", contentType: contentType ?? MIMETypes.fallback,
            content: .data(data ?? Data()))
    }

    /// Applies `change` to the state and marks a built body stale.
    func mutateBody(_ change: (inout RequestState) -> Void) {
        state.withLock { state in
            change(&state)
            state.invalidateBody()
        }
    }

}
