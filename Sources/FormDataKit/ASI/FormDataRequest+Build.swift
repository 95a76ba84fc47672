import Foundation

extension FormDataRequest {
    // MARK: - Building the body

    /// Builds the body if it is not built yet (or went stale): encodes the form and computes its
    /// exact length, `Content-Type` and the method. Nothing is sent, and nothing is spooled.
    ///
    /// - Form without files: URL-encoded (or multipart when ``postFormat`` says so), kept in
    ///   memory (``postBody``) unless ``shouldStreamPostDataFromDisk``.
    /// - Form with files: multipart, its file parts left in their files. The body is spooled to a
    ///   temporary file only when something needs one: reading ``postBodyFilePath``, or sending
    ///   through a transport that takes files and not streams (see `BodyDelivery`).
    /// - Empty form: no body, no `Content-Type`.
    ///
    /// The result is the same whatever the ``transport``: headers, ``postLength``,
    /// ``debugBodyString`` and ``bodySource``.
    ///
    /// - Throws: `FormDataError` naming the file, field or encoding at fault, or
    ///   `FormDataError.invalidRequestHeader(name:value:)` for a header set with
    ///   ``addRequestHeader(_:value:)`` whose name is not a token or whose value has CR, LF or NUL.
    ///   Nothing is left on disk when a build fails.
    public func buildPostBody() throws {
        try RequestHeaderValidation.requireValid(state.withLock { $0.requestHeaders })
        while true {
            let snapshot: RequestState? = state.withLock { $0.built == nil ? $0 : nil }
            guard let snapshot else { return }
            let built = try Self.makeBody(from: snapshot)
            let applied = state.withLock { current -> Bool in
                // Changed while building, or built by another thread meanwhile: this body is
                // dropped (with any temporary file); the loop builds again or finds the other.
                guard current.generation == snapshot.generation, current.built == nil else { return false }
                current.built = built
                return true
            }
            if applied {
                if let text = built.debugString { Self.emitDebugLog(text) }
                return
            }
        }
    }

    /// The in-memory body after a build, when it was not spooled (nil for spooled bodies).
    ///
    /// Setting it makes the request send these bytes as they are — a raw body, as
    /// ASIHTTPRequest's `setPostBody:` (JSON built by hand, XML, a PUT of bytes): no
    /// `Content-Type` is added (set one), the length is exact, a GET becomes a POST as for forms.
    /// Form fields and a raw body cannot both be sent (`FormDataError.rawBodyWithFormFields(field:)`
    /// at build). Setting nil removes the raw body.
    public var postBody: Data? {
        get {
            state.withLock { state in
                if let body = state.built?.postBody { return body }
                guard state.built == nil, let raw = state.rawBody, raw.allSatisfy({ if case .bytes = $0 { true } else { false } }) else {
                    return nil
                }
                return raw.reduce(into: Data()) { if case .bytes(let data) = $1 { $0.append(data) } }
            }
        }
        set { mutateBody { $0.rawBody = newValue.map { [.bytes($0)] } } }
    }

    /// Appends `data` to the raw body (ASIHTTPRequest's `appendPostData:`); see ``postBody``.
    /// - Parameter data: the bytes to add at the end of the raw body.
    public func appendPostData(_ data: Data) {
        mutateBody { $0.rawBody = ($0.rawBody ?? []) + [.bytes(data)] }
    }

    /// Appends the file at `path` to the raw body (ASIHTTPRequest's `appendPostDataFromFile:`):
    /// it is read when sent, never loaded whole; a file that changes size before then fails the
    /// send (`FormDataError.fileChanged(path:expectedSize:actualSize:)`).
    /// - Throws: `FormDataError.fileNotFound(path:)`, `FormDataError.fileIsDirectory(path:)` or
    ///   `FormDataError.notARegularFile(path:kind:)` (a FIFO, a device, a socket, a `/proc` file)
    ///   at once, as ``addFile(_:forKey:)`` does.
    /// - Parameter path: the file whose contents are added at the end of the raw body.
    public func appendPostDataFromFile(_ path: String) throws(FormDataError) {
        _ = try FileInspection.regularFileSize(at: path)
        mutateBody { $0.rawBody = ($0.rawBody ?? []) + [.file(path: path)] }
    }

    /// The path of the body spooled to a temporary file, for a body kept on disk (forms with
    /// files, or ``shouldStreamPostDataFromDisk``). Nil when the body is compressed (it is
    /// compressed straight to ``compressedPostBodyFilePath``, never spooled), kept in memory, or
    /// not built.
    ///
    /// A build spools nothing: reading this property spools the body then, on first access, so
    /// code that reads the file (as ASIHTTPRequest code did) still can, and a send through a
    /// transport that takes files uses that same file. Nil if that spool fails (a file changed or
    /// vanished, or the disk is full): sending reports why. The file is removed on rebuild, after
    /// a send, and when the request is released.
    ///
    /// Setting it makes the file the raw body, sent as it is (ASIHTTPRequest's
    /// `setPostBodyFilePath:` with `shouldStreamPostDataFromDisk`: a PUT of a file): read when
    /// sent, never loaded whole; reading the property then gives the same path back. Setting nil
    /// removes the raw body. A setter cannot throw: a path that is missing or not a regular file
    /// (a FIFO, a device, a socket, a `/proc` file) is refused by the build — ``buildPostBody()``
    /// throws `FormDataError.notARegularFile(path:kind:)` naming it, and a send fails with it —
    /// before a byte is read.
    public var postBodyFilePath: String? {
        get {
            // The caller's own file for a raw file body, else the spool (made now if the body is
            // kept on disk and not spooled yet).
            if let raw = state.withLock({ $0.rawBody }), raw.count == 1, case .file(let path) = raw[0] { return path }
            let pending = state.withLock { state -> (BodySource, UInt64)? in
                // A body with streams is not spooled: that would read them before the send.
                guard let built = state.built, built.spooledFile == nil, built.postBody == nil, built.compressed == nil,
                    built.source.length > 0, built.source.streams.isEmpty
                else { return nil }
                return (built.source, state.generation)
            }
            if let (source, generation) = pending, let file = try? BodySpooler.spool(source), !keepSpool(file, generation: generation) {
                file.remove()
            }
            return state.withLock { $0.built?.spooledFile?.path }
        }
        set {
            mutateBody { state in
                state.rawBody = newValue.map { [.file(path: $0)] }
                if newValue != nil { state.shouldStreamPostDataFromDisk = true }
            }
        }
    }

    /// Keeps `file`, a spool of the body of `generation`, as the built body's spool. False when
    /// the body changed meanwhile or another spool got there first (the caller then owns `file`).
    func keepSpool(_ file: TemporaryFile, generation: UInt64) -> Bool {
        state.withLock { state -> Bool in
            guard state.generation == generation, state.built != nil, state.built?.spooledFile == nil else { return false }
            state.built?.spooledFile = file
            return true
        }
    }

    /// Whether the built body is in a spooled temporary file now (without spooling it, unlike
    /// ``postBodyFilePath``): false for bodies in memory, compressed, or not spooled yet.
    public var isPostBodySpooled: Bool { state.withLock { $0.built?.spooledFile != nil } }

    /// The gzip-compressed body after a build, when ``shouldCompressRequestBody`` is on and the
    /// compressed body is kept in memory (small bodies that are not streamed from disk).
    public var compressedPostBody: Data? {
        state.withLock { state in
            if case .memory(let data)? = state.built?.compressed { return data }
            return nil
        }
    }

    /// The path of the gzip-compressed body after a build, when ``shouldCompressRequestBody`` is
    /// on and the body was compressed to a temporary file (forms with files, bodies streamed from
    /// disk, bodies over 1 MiB). The file is removed on rebuild and when the request is released.
    public var compressedPostBodyFilePath: String? {
        state.withLock { state in
            if case .file(let file, _)? = state.built?.compressed { return file.path }
            return nil
        }
    }

    /// The number of bytes that will be sent (the compressed size for a compressed body); 0 until
    /// the body is built. For a body with a stream of unknown length it is the bytes of the other
    /// parts only, and ``isPostLengthKnown`` is false (the body goes out chunked).
    public var postLength: UInt64 { state.withLock { $0.built?.postLength ?? $0.lastSentPostLength } }

    /// The debug log of the last build (ASIHTTPRequest's `debugBodyString`): the body as text with
    /// data parts shown as `[N bytes of data]`, file parts as
    /// `[N bytes of data from file '<path>']` and streamed parts as `[stream of unknown length]`
    /// (or `[N bytes of data from a stream]`). Nil unless the debug log is on.
    public var debugBodyString: String? { state.withLock { $0.built?.debugString } }

    /// The encoded body of the last build, as segments (for transports and tests).
    public var bodySource: BodySource? { state.withLock { $0.built?.source } }

    /// Encodes and places a body for `snapshot`. Runs outside the state lock.
    static func makeBody(from snapshot: RequestState) throws(FormDataError) -> BuiltBody {
        let debug = snapshot.shouldLogDebugBody || debugFormDataRequests
        guard let encoded = try encode(snapshot, debug: debug) else { return .none }
        return try place(encoded.body, onDisk: encoded.onDisk, snapshot: snapshot)
    }

    /// The length of the encoded (uncompressed) body of `snapshot`: encoded as segments, never
    /// compressed, kept in memory or spooled.
    static func encodedLength(of snapshot: RequestState) throws(FormDataError) -> UInt64 {
        try encode(snapshot, debug: false)?.body.postLength ?? 0
    }

    /// The encoded body of `snapshot` and whether it is kept on disk; nil when there is none.
    /// A raw body is its parts as they are, with no `Content-Type` of its own (set one with
    /// ``addRequestHeader(_:value:)``), files read when sent.
    private static func encode(_ snapshot: RequestState, debug: Bool) throws(FormDataError) -> (body: BuiltBody, onDisk: Bool)? {
        let form = snapshot.form
        if let raw = snapshot.rawBody {
            if let field = form.values.first?.name ?? form.files.first?.name { throw .rawBodyWithFormFields(field: field) }
            var segments: [BodySegment] = []
            var hasFile = false
            for part in raw {
                switch part {
                case .bytes(let data):
                    if !data.isEmpty { segments.append(BodySegment(.bytes(data))) }
                case .file(let path):
                    let size = try FileInspection.regularFileSize(at: path)
                    hasFile = true
                    if size > 0 { segments.append(BodySegment(.file(FileRange(path: path, length: size, expectedFileSize: size)))) }
                case .stream(let stream):
                    // Never read at build: kept as a segment (not in memory) for the reader.
                    hasFile = true
                    if stream.declaredLength != 0 { segments.append(BodySegment(.stream(stream))) }
                }
            }
            let source = BodySource(segments: segments)
            guard !source.isEmpty else { return nil }
            let built = BuiltBody(
                source: source, postBody: nil, spooledFile: nil, compressed: nil, postLength: source.length,
                debugString: nil, contentType: nil, hasFiles: false, boundary: nil)
            return (built, hasFile || snapshot.shouldStreamPostDataFromDisk)
        }
        guard !form.isEmpty else { return nil }
        // A file deleted, truncated or grown since it was added fails the build (nothing is
        // sent): FormEncoder.multipart checks, as every form with files is multipart.
        let hasFiles = !form.files.isEmpty
        let encoded: EncodedBody
        if hasFiles || snapshot.postFormat == .multipartFormData {
            encoded = try FormEncoder.multipart(
                form, encoding: snapshot.stringEncoding, boundary: snapshot.boundary,
                regenerateOnCollision: !snapshot.boundaryIsCustom, debug: debug, redacting: snapshot.debugBodyRedactedFields)
        } else {
            encoded = try FormEncoder.urlEncoded(
                form, encoding: snapshot.stringEncoding, debug: debug,
                redacting: snapshot.debugBodyRedactedFields)
        }
        let built = BuiltBody(
            source: encoded.source, postBody: nil, spooledFile: nil, compressed: nil, postLength: encoded.source.length,
            debugString: encoded.debugText, contentType: encoded.contentType, hasFiles: hasFiles,
            boundary: encoded.boundary)
        return (built, hasFiles || snapshot.shouldStreamPostDataFromDisk)
    }

    /// Compresses `built` when asked; keeps a body that stays in memory as ``postBody``. A body
    /// kept on disk (`onDisk`) is not spooled here: see ``BodyDelivery``.
    private static func place(_ built: BuiltBody, onDisk: Bool, snapshot: RequestState) throws(FormDataError) -> BuiltBody {
        var built = built
        let source = built.source
        if snapshot.shouldCompressRequestBody && !source.streams.isEmpty {
            // Streams are read only while sent: compressed then, chunked.
            built.source = GzipOnTheFly.body(of: source, level: snapshot.compressionLevel)
            built.compressesWhileSent = true
            built.postLength = 0
        } else if snapshot.shouldCompressRequestBody && !source.isEmpty {
            // One pass from the parts: the uncompressed body is never spooled.
            let toFile = onDisk || source.length > BodyDelivery.defaultInMemoryLimit
            let compressed = try BodyCompressor.compress(
                source,
                settings: CompressionSettings(
                    level: snapshot.compressionLevel, adaptive: snapshot.adaptiveCompression,
                    threads: snapshot.compressionThreads),
                to: toFile ? .temporaryFile : .memory)
            built.compressed = compressed
            built.postLength = compressed.length
        }
        if !onDisk {
            built.postBody = try source.readAll()
        }
        return built
    }

    private static func emitDebugLog(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
        logger.debug("\(text)")
    }
}
