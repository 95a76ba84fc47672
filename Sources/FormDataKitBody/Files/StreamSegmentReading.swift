import FormDataKitWire
import Foundation

/// Reads one attempt of a body's stream segment (``StreamedContent``) for ``BodyReader``: on a
/// ``BodyReaderPool`` worker (a read may block until the stream has bytes), never on a
/// transport's thread. A declared length is checked both ways before the stream's last bytes
/// are handed on: a stream that ends early or has more fails the read.
final class StreamSegmentReader {
    private let stream: StreamedContent
    private let input: InputStream?
    private let pieces: AsyncPieces?
    private let pull: ((UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int)?
    private var count: UInt64 = 0
    private var checkedEnd = false

    /// A reader of the stream `stream` gives for this attempt.
    /// - Throws: what ``StreamedContent/take(reason:)`` throws.
    init(_ stream: StreamedContent) throws(FormDataError) {
        self.stream = stream
        switch try stream.take() {
        case .inputStream(let input):
            (self.input, self.pieces, self.pull) = (input, nil, nil)
        case .reader(let pull):
            (self.input, self.pieces, self.pull) = (nil, nil, pull)
        case .sequence(let makeNext):
            let pieces = AsyncPieces(makeNext: makeNext)
            (self.input, self.pieces, self.pull) = (nil, pieces, nil)
            stream.onCancel { [weak pieces] in pieces?.cancel() }
        }
    }

    deinit {
        input?.close()
        pieces?.cancel()
    }

    /// Copies the stream's next bytes into `buffer`; 0 at its end.
    /// - Throws: ``FormDataError/streamLengthMismatch(field:declaredLength:streamedLength:)``,
    ///   ``FormDataError/streamFailed(field:underlying:)``, or ``FormDataError/cancelled``.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int {
        guard let declared = stream.declaredLength else {
            let got = try rawRead(into: buffer)
            count += UInt64(got)
            return got
        }
        if count == declared {
            if !checkedEnd { try requireEnd(declared) }
            return 0
        }
        let limit = Int(clamping: min(UInt64(buffer.count), declared - count))
        let got = try rawRead(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<limit]))
        if got == 0 { throw .streamLengthMismatch(field: stream.field, declaredLength: declared, streamedLength: count) }
        count += UInt64(got)
        // The end is checked before the last bytes go: when more follows, they are not handed on.
        if count == declared { try requireEnd(declared) }
        return got
    }

    private func requireEnd(_ declared: UInt64) throws(FormDataError) {
        var extra: UInt8 = 0
        let got = try withUnsafeMutableBytes(of: &extra) { (byte) throws(FormDataError) in try rawRead(into: byte) }
        checkedEnd = true
        if got > 0 { throw .streamLengthMismatch(field: stream.field, declaredLength: declared, streamedLength: declared + 1) }
    }

    private func rawRead(into buffer: UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int {
        guard buffer.count > 0 else { return 0 }
        if let pieces { return try pieces.read(into: buffer, field: stream.field) }
        if let pull { return try pull(buffer) }
        guard let input else { return 0 }
        if input.streamStatus == .notOpen { input.open() }
        if input.streamStatus == .atEnd { return 0 }
        let got = input.read(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: buffer.count)
        if got < 0 {
            let message = input.streamError.map { String(describing: $0) } ?? "read failed"
            throw .streamFailed(field: stream.field, underlying: UnderlyingError(domain: "InputStream", code: 0, message: message))
        }
        return got
    }
}

/// An async sequence's pieces handed to a blocking reader: a task pulls one piece at a time,
/// only when the one before was copied out (at most one piece held), and waits without
/// blocking a thread; the reader waits on a condition (on a reader worker).
private final class AsyncPieces: @unchecked Sendable {
    // `@unchecked`: every variable is guarded by `condition`.
    private let condition = NSCondition()
    private let makeNext: @Sendable () -> () async throws -> Data?
    private var piece: Data?
    private var offset = 0
    private var finished = false
    private var failure: UnderlyingError?
    private var cancelled = false
    private var task: Task<Void, Never>?
    /// The producer, waiting for the piece it gave to be copied out.
    private var producerWaiting: CheckedContinuation<Void, Never>?

    init(makeNext: @escaping @Sendable () -> () async throws -> Data?) {
        self.makeNext = makeNext
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, field: String) throws(FormDataError) -> Int {
        condition.lock()
        defer { condition.unlock() }
        if task == nil { task = Task { [self] in await produce() } }
        while true {
            if cancelled { throw .cancelled }
            if let data = piece {
                let copied = min(buffer.count, data.count - offset)
                data.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: copied) }
                offset += copied
                if offset == data.count {
                    piece = nil
                    offset = 0
                    producerWaiting?.resume()
                    producerWaiting = nil
                }
                return copied
            }
            if let failure { throw .streamFailed(field: field, underlying: failure) }
            if finished { return 0 }
            condition.wait()
        }
    }

    func cancel() {
        let (task, waiting) = condition.withLock { () -> (Task<Void, Never>?, CheckedContinuation<Void, Never>?) in
            cancelled = true
            condition.broadcast()
            defer { producerWaiting = nil }
            return (self.task, producerWaiting)
        }
        waiting?.resume()
        task?.cancel()
    }

    private func produce() async {
        let next = makeNext()
        while true {
            var got: Data?
            var thrown: UnderlyingError?
            do { got = try await next() } catch { thrown = UnderlyingError(error) }
            let stop = condition.withLock { () -> Bool in
                guard !cancelled else { return true }
                if let thrown {
                    failure = thrown
                } else if let got {
                    if !got.isEmpty { piece = got }
                } else {
                    finished = true
                }
                condition.broadcast()
                return finished || failure != nil
            }
            if stop { return }
            await withCheckedContinuation { (waiting: CheckedContinuation<Void, Never>) in
                let now = condition.withLock { () -> Bool in
                    guard piece != nil, !cancelled else { return true }
                    producerWaiting = waiting
                    return false
                }
                if now { waiting.resume() }
            }
        }
    }
}
