import Foundation

/// A part of a body whose bytes a stream gives while the body is sent: an `InputStream` or an
/// `AsyncSequence` of `Data`, of a declared length or of none (then the body goes out chunked).
///
/// A stream is read once. Added as a stream, it cannot be sent again once it was read (a retry,
/// a redirect or a challenge that re-sends the body fails with
/// ``FormDataError/streamNotReplayable(field:reason:)``); added with a factory, a fresh stream
/// is made for every attempt. The body reader checks a declared length both ways
/// (``FormDataError/streamLengthMismatch(field:declaredLength:streamedLength:)``).
public final class StreamedContent: @unchecked Sendable, Equatable {
    // `@unchecked`: `taken` and `cancelHooks` are guarded by `lock`; a stream handed out by
    // ``take()`` is read by one reader at a time.

    /// Where a stream's bytes come from, for one attempt.
    package enum Source: @unchecked Sendable {
        /// A Foundation stream, opened when first read and closed at its end.
        case inputStream(InputStream)
        /// The pieces of an async sequence: `makeNext` gives a `next()` over a new iterator.
        case sequence(makeNext: @Sendable () -> () async throws -> Data?)
        /// A reader made by the body engine (the gzip of a body, made as it is read): each call
        /// copies the next bytes into the buffer, 0 at the end.
        case reader((UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int)
    }

    /// The field the stream is the content of (`body` for a raw body), named by its errors.
    public let field: String
    /// The number of bytes the stream will give, or nil when it is not known.
    public let declaredLength: UInt64?
    private let once: Source?
    private let factory: (@Sendable () throws -> Source)?
    private let replayable: Bool
    private let lock = NSLock()
    private var taken = false
    private var cancelHooks: [@Sendable () -> Void] = []

    private init(field: String, length: UInt64?, once: Source?, factory: (@Sendable () throws -> Source)?, replayable: Bool? = nil) {
        self.field = field
        self.declaredLength = length
        self.once = once
        self.factory = factory
        self.replayable = replayable ?? (factory != nil)
    }

    /// Bytes of unknown length the body engine makes for each attempt with `makeSource`
    /// (a compressed view of another body), replayable when `replayable` says so.
    /// - Parameters:
    ///   - field: the field named by errors.
    ///   - replayable: whether another attempt can read it again.
    ///   - makeSource: makes the source of one attempt.
    package convenience init(field: String, replayable: Bool, makeSource: @escaping @Sendable () throws -> Source) {
        self.init(field: field, length: nil, once: nil, factory: makeSource, replayable: replayable)
    }

    /// The bytes of `stream`, read once.
    /// - Parameters:
    ///   - stream: the stream (opened when first read, closed at its end); not used by anyone else.
    ///   - length: the exact number of bytes it gives, or nil when unknown.
    ///   - field: the field it is the content of, for errors.
    public convenience init(_ stream: InputStream, length: UInt64?, field: String) {
        self.init(field: field, length: length, once: .inputStream(stream), factory: nil)
    }

    /// The pieces of `sequence`, iterated once.
    /// - Parameters:
    ///   - sequence: the pieces, in order (an empty piece is skipped).
    ///   - length: the exact number of bytes they add up to, or nil when unknown.
    ///   - field: the field it is the content of, for errors.
    public convenience init<S: AsyncSequence & Sendable>(_ sequence: S, length: UInt64?, field: String) where S.Element == Data {
        self.init(field: field, length: length, once: Self.source(of: sequence), factory: nil)
    }

    /// A new stream from `makeStream` for every attempt (so retries, redirects and challenges
    /// can send the body again).
    /// - Parameters:
    ///   - length: the exact number of bytes each stream gives, or nil when unknown.
    ///   - field: the field it is the content of, for errors.
    ///   - makeStream: makes a fresh stream at its start; what it throws fails the send.
    public convenience init(length: UInt64?, field: String, makeStream: @escaping @Sendable () throws -> InputStream) {
        self.init(field: field, length: length, once: nil, factory: { .inputStream(try makeStream()) })
    }

    private static func source<S: AsyncSequence & Sendable>(of sequence: S) -> Source where S.Element == Data {
        .sequence(makeNext: {
            var iterator = sequence.makeAsyncIterator()
            return { try await iterator.next() }
        })
    }

    /// Whether a fresh stream can be made for another attempt.
    public var isReplayable: Bool { replayable }

    /// The stream for an attempt: a new one from the factory, or the one stream the first time.
    /// - Parameter reason: what asks for it again, for the error.
    /// - Returns: the source to read.
    /// - Throws: ``FormDataError/streamNotReplayable(field:reason:)`` when the one stream was
    ///   taken before; ``FormDataError/streamFailed(field:underlying:)`` when the factory throws.
    package func take(reason: String = "the body is sent again") throws(FormDataError) -> Source {
        if let factory {
            do { return try factory() } catch { throw .streamFailed(field: field, underlying: UnderlyingError(error)) }
        }
        let first = lock.withLock { () -> Bool in
            defer { taken = true }
            return !taken
        }
        guard first, let once else { throw .streamNotReplayable(field: field, reason: reason) }
        return once
    }

    /// Calls `hook` when reading is cancelled (``cancelReads()``).
    package func onCancel(_ hook: @escaping @Sendable () -> Void) {
        lock.withLock { cancelHooks.append(hook) }
    }

    /// Stops the reads of the streams handed out so far (a send cancelled or restarted).
    package func cancelReads() {
        let hooks = lock.withLock { () -> [@Sendable () -> Void] in
            defer { cancelHooks = [] }
            return cancelHooks
        }
        for hook in hooks { hook() }
    }

    /// Streams are equal when they are the same stream.
    /// - Parameters:
    ///   - lhs: one stream.
    ///   - rhs: the other.
    /// - Returns: whether both are the same object.
    public static func == (lhs: StreamedContent, rhs: StreamedContent) -> Bool { lhs === rhs }
}
