import FormDataKitBody
import FormDataKitWire
import Foundation

/// How an encoded body reaches a transport: the one memory/disk policy of FormDataKit.
///
/// A body is encoded into a `BodySource` (segments: bytes, and ranges of the caller's files)
/// when it is built; nothing is spooled then. When it is sent, the transport's
/// `FormDataTransport.acceptedBodyForms` decide what it becomes:
///
/// 1. a body that is all in memory, or no longer than the transport's
///    `FormDataTransport.inMemoryBodyLimit` (``defaultInMemoryLimit`` unless the transport says
///    otherwise), is read straight from its parts into memory, by the thread that prepares the
///    send (never a transport's): a streaming transport then sends it without a reader-pool
///    round trip;
/// 2. otherwise a transport that takes `TransportBodyForms.stream` (``CurlTransport``, the
///    AsyncHTTPClient transport) gets the segments themselves, whatever the size: no spool, no copy;
/// 3. otherwise it is spooled once to a private 0600 temporary file (space reserved first),
///    sent from there and removed when the send ends.
///
/// A body is never spooled and then read back into memory. The same policy serves
/// `FormDataRequest` and FormDataKitAF's `AFHTTPSessionManager`.
public enum BodyDelivery {
    /// Bodies up to this many bytes go to a transport that does not stream in memory: 1 MiB.
    public static let defaultInMemoryLimit: UInt64 = TransportBodyForms.defaultInMemoryLimit

    /// A body ready for a transport, and the temporary file made for it (if any), which the
    /// caller keeps alive while the send runs and removes after.
    package struct Delivered: Sendable {
        /// What the transport is given.
        package var body: TransportRequest.Body
        /// The spool made for this send, nil when none was needed.
        package var temporaryFile: TemporaryFile?

        /// A delivered body and its spool.
        package init(body: TransportRequest.Body, temporaryFile: TemporaryFile?) {
            self.body = body
            self.temporaryFile = temporaryFile
        }
    }

    /// The form in which `source` reaches a transport that takes `forms`, following the policy
    /// above. `spooled`: a spool of `source` that already exists (made because someone read
    /// `postBodyFilePath`), sent as it is rather than read back or spooled again.
    /// - Parameters:
    ///   - source: the encoded body.
    ///   - forms: what the transport takes.
    ///   - inMemoryLimit: the transport's ``FormDataTransport/inMemoryBodyLimit``.
    ///   - spooled: an existing spool of `source`, if any.
    ///   - purpose: names a new temporary file (`body`, `af-upload`).
    ///   - transport: names the transport in ``FormDataError/transportCannotStream(transport:)``.
    /// - Returns: the body to send and the temporary file newly made for it, if any.
    /// - Throws: ``FormDataError`` when a file part cannot be read or changed size, or the spool
    ///   cannot be written (nothing is left on disk); ``FormDataError/transportCannotStream(transport:)``
    ///   for a body with streams (``StreamedContent``) and a transport that does not take streams
    ///   (`transport` names it in the error).
    package static func deliver(
        _ source: BodySource, to forms: TransportBodyForms, inMemoryLimit: UInt64,
        spooled: TemporaryFile? = nil, purpose: String = "body", transport: String = "The transport"
    ) throws(FormDataError) -> Delivered {
        guard !source.isEmpty else { return Delivered(body: .none, temporaryFile: nil) }
        if forms.contains(.stream) {
            // A body with streams is never read ahead here: its streams are read while sent.
            let small =
                forms.contains(.bytes) && !source.isInMemory && source.streams.isEmpty && source.length <= inMemoryLimit
            return Delivered(body: small ? .data(try source.readAll()) : .source(source), temporaryFile: nil)
        }
        // A stream is read once, while it is sent: never into memory or a spool first.
        if !source.streams.isEmpty { throw .transportCannotStream(transport: transport) }
        if let spooled, forms.contains(.file) {
            return Delivered(body: .file(path: spooled.path, length: source.length), temporaryFile: nil)
        }
        if forms.contains(.bytes), source.isInMemory || source.length <= inMemoryLimit || !forms.contains(.file) {
            return Delivered(body: .data(try source.readAll()), temporaryFile: nil)
        }
        let file = try BodySpooler.spool(source, purpose: purpose)
        return Delivered(body: .file(path: file.path, length: source.length), temporaryFile: file)
    }
}
