import Foundation

/// What the block given to
/// ``AFHTTPRequestSerializer/multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)``
/// appends parts with (AFNetworking's `AFMultipartFormData` protocol).
///
/// Every part is written as `Content-Disposition: form-data; name="…"[; filename="…"]`, then
/// `Content-Type` when it has one. `"`, CR and LF in names and file names are escaped as
/// `%22`, `%0D`, `%0A` (AFNetworking wrote them raw). The non-throwing methods record a failure
/// and the request method throws it when the block returns.
public protocol AFMultipartFormData: AnyObject {
    /// Appends the file at `fileURL` as part `name`, with its last path component as the file name
    /// and the MIME type its extension maps to (`application/octet-stream` when unknown).
    ///
    /// - Throws: ``AFURLRequestSerializationError/notFileURL(_:)``,
    ///   ``AFURLRequestSerializationError/fileNotReachable(_:)``,
    ///   ``AFURLRequestSerializationError/fileIsDirectory(_:)``, `FormDataError.notARegularFile` for
    ///   a FIFO, a device, a socket or a `/proc` file (naming the path), `FormDataError.fileNameNotUTF8`
    ///   for a file whose name is not valid UTF-8 (naming its bytes, `bad\xFF.txt`), or a
    ///   `FormDataError` when the file cannot be read.
    func appendPart(withFileURL fileURL: URL, name: String) throws

    /// Appends the file at `fileURL` as part `name` with the given file name and MIME type. The
    /// file's size is taken now (Content-Length is exact); the file is read when the body is read,
    /// and a file that changed size by then is an error, never a wrong body.
    ///
    /// - Throws: as ``appendPart(withFileURL:name:)``, and `FormDataError.invalidHeaderValue` for a
    ///   MIME type with CR, LF or NUL.
    func appendPart(withFileURL fileURL: URL, name: String, fileName: String, mimeType: String) throws

    /// Appends exactly `length` bytes of `inputStream` (nil: no bytes) as part `name`. The stream
    /// is read now — into memory, or a private temporary file when it is large — so the body can
    /// be read again and its length is exact. A stream with fewer or more bytes than `length` is
    /// an error, thrown when the block returns.
    ///
    /// FormDataKit's addition: a `length` of -1 (unknown) keeps the stream as it is, read only
    /// while the body is sent, which then goes `Transfer-Encoding: chunked` (no `Content-Length`);
    /// such a body is read once (a re-send fails with `FormDataError.streamNotReplayable`), and
    /// only streaming transports send it (curl, AsyncHTTPClient). Other negative lengths are errors.
    func appendPart(with inputStream: InputStream?, name: String, fileName: String, length: Int64, mimeType: String)

    /// Appends `data` as a file part `name` with the given file name and MIME type.
    func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String)

    /// Appends `data` as a plain form field `name` (no file name, no Content-Type).
    func appendPart(withForm data: Data, name: String)

    /// Appends `body` with exactly the given part headers (none: just the blank line).
    /// `Content-Disposition` comes first, the other headers follow sorted by name. A header name
    /// or value with CR, LF or NUL (or a name with `:`) is an error, thrown when the block returns.
    func appendPart(withHeaders headers: [String: String]?, body: Data)

    /// Makes the request's body stream return at most `numberOfBytes` per read and sleep `delay`
    /// seconds after each piece it copies (AFNetworking's 3G workaround; see
    /// ``kAFUploadStream3GSuggestedPacketSize`` and ``kAFUploadStream3GSuggestedDelay``).
    func throttleBandwidth(withPacketSize numberOfBytes: Int, delay: TimeInterval)
}
