import Foundation

extension FormDataRequest {
    // MARK: - Streamed parts

    /// Appends a file field whose bytes `stream` gives while the body is sent (a pipe, an
    /// encoder's output): never read at build, never spooled. With `length`, the part goes with
    /// the body's exact `Content-Length`, and a stream that gives fewer or more bytes fails the
    /// send (`FormDataError.streamLengthMismatch(field:declaredLength:streamedLength:)`); without,
    /// the body goes out `Transfer-Encoding: chunked`. The stream is read once: a body that would
    /// be sent again after it was read fails with `FormDataError.streamNotReplayable(field:reason:)`
    /// (use ``addStream(length:withFileName:andContentType:forKey:makeStream:)`` to allow it).
    /// - Parameters:
    ///   - stream: the stream (opened when first read, closed at its end).
    ///   - length: the exact number of bytes, or nil (or a negative number) when unknown.
    ///   - fileName: the `filename` sent.
    ///   - contentType: the part's type; nil: from the file name's extension.
    ///   - key: the field name.
    public func addStream(
        _ stream: InputStream, length: Int64? = nil, withFileName fileName: String, andContentType contentType: String?, forKey key: String
    ) {
        let field = Self.streamField(StreamedContent(stream, length: Self.declared(length), field: key), fileName, contentType, key)
        mutateBody { $0.form.addFile(field) }
    }

    /// Removes every file or data field named `key`, then appends `stream` as
    /// ``addStream(_:length:withFileName:andContentType:forKey:)-(InputStream,_,_,_,_)`` does.
    /// - Parameters:
    ///   - stream: the stream (opened when first read, closed at its end).
    ///   - length: the exact number of bytes, or nil (or a negative number) when unknown.
    ///   - fileName: the `filename` sent.
    ///   - contentType: the part's type; nil: from the file name's extension.
    ///   - key: the field name.
    public func setStream(
        _ stream: InputStream, length: Int64? = nil, withFileName fileName: String, andContentType contentType: String?, forKey key: String
    ) {
        let field = Self.streamField(StreamedContent(stream, length: Self.declared(length), field: key), fileName, contentType, key)
        mutateBody { $0.form.setFile(field) }
    }

    /// Appends a file field whose bytes are the pieces of `sequence`, iterated while the body is
    /// sent (one piece held at a time); otherwise as
    /// ``addStream(_:length:withFileName:andContentType:forKey:)-(InputStream,_,_,_,_)``. An
    /// error the sequence throws fails the send (`FormDataError.streamFailed(field:underlying:)`).
    /// - Parameters:
    ///   - sequence: the pieces, in order.
    ///   - length: the exact number of bytes they add up to, or nil (or a negative number) when unknown.
    ///   - fileName: the `filename` sent.
    ///   - contentType: the part's type; nil: from the file name's extension.
    ///   - key: the field name.
    public func addStream<S: AsyncSequence & Sendable>(
        _ sequence: S, length: Int64? = nil, withFileName fileName: String, andContentType contentType: String?, forKey key: String
    ) where S.Element == Data {
        let field = Self.streamField(
            StreamedContent(sequence, length: Self.declared(length), field: key), fileName, contentType, key)
        mutateBody { $0.form.addFile(field) }
    }

    /// Appends a file field whose bytes a stream from `makeStream` gives, a new stream for every
    /// attempt: retries, redirects that re-send the body and challenge re-sends call it again.
    /// - Parameters:
    ///   - length: the exact number of bytes each stream gives, or nil (or a negative number) when unknown.
    ///   - fileName: the `filename` sent.
    ///   - contentType: the part's type; nil: from the file name's extension.
    ///   - key: the field name.
    ///   - makeStream: makes the stream, at its start; what it throws fails the send.
    public func addStream(
        length: Int64? = nil, withFileName fileName: String, andContentType contentType: String?, forKey key: String,
        makeStream: @escaping @Sendable () throws -> InputStream
    ) {
        let stream = StreamedContent(length: Self.declared(length), field: key, makeStream: makeStream)
        let field = Self.streamField(stream, fileName, contentType, key)
        mutateBody { $0.form.addFile(field) }
    }

    /// Appends the bytes `stream` gives to the raw body (see ``postBody``), read when sent: with
    /// `length` exact (checked both ways), without it chunked. Read once, as
    /// ``addStream(_:length:withFileName:andContentType:forKey:)-(InputStream,_,_,_,_)``; errors
    /// name the field `body`.
    /// - Parameters:
    ///   - stream: the stream (opened when first read, closed at its end).
    ///   - length: the exact number of bytes, or nil (or a negative number) when unknown.
    public func appendPostData(from stream: InputStream, length: Int64?) {
        let part = StreamedContent(stream, length: Self.declared(length), field: "body")
        mutateBody { $0.rawBody = ($0.rawBody ?? []) + [.stream(part)] }
    }

    /// Whether ``postLength`` is the whole body's length: false after a build of a body with a
    /// stream of unknown length (it goes out `Transfer-Encoding: chunked`; ``requestHeaders``
    /// then has that header and no `Content-Length`). True before a build.
    public var isPostLengthKnown: Bool { state.withLock { $0.built?.isLengthKnown ?? true } }

    /// A declared length: nil for none or a negative one (AFNetworking's -1).
    private static func declared(_ length: Int64?) -> UInt64? { length.flatMap { $0 >= 0 ? UInt64($0) : nil } }

    private static func streamField(_ stream: StreamedContent, _ fileName: String, _ contentType: String?, _ key: String) -> FormFileField {
        FormFileField(
            name: key, fileName: fileName, contentType: contentType ?? mimeType(forFileAtPath: fileName) ?? MIMETypes.fallback,
            content: .stream(stream))
    }
}
