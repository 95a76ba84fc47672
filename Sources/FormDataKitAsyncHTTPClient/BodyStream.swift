#if AsyncHTTPClient
import AsyncHTTPClient
import FormDataKit
import Foundation
import NIOCore

/// The body writer of one exchange: takes a body from the engine's one body reader
/// (``BodyReadAhead``, its files read ahead on the reader pool) as the client's demand allows —
/// the next chunk is taken once the one before was written — and, while the reader has nothing
/// ready, waits for its ready callback without holding an event loop.
///
/// Chunks are copied into a ring of two buffers that are reused once the client has written them
/// (`clear()` keeps a buffer's memory when nothing else holds it), so a long upload does not
/// allocate a new chunk per write.
final class BodyStream: @unchecked Sendable {
    // `@unchecked`: `waiting` and `readyEarly` are guarded by `lock`; the ring and the reads are
    // touched by one write at a time (each chunk is written before the next is taken).
    private let chunkSize: Int
    private let loop: any EventLoop
    private var readAhead: BodyReadAhead!
    private let lock = NSLock()
    private var waiting: EventLoopPromise<Void>?
    private var readyEarly = false
    private var ring: [ByteBuffer] = []
    private var nextSlot = 0

    /// A writer of `source`, read ahead in chunks of `chunkSize` bytes; futures it makes are `loop`'s.
    init(_ source: BodySource, chunkSize: Int, loop: any EventLoop) {
        self.chunkSize = chunkSize
        self.loop = loop
        readAhead = BodyReadAhead(source: source, chunkSize: chunkSize) { [weak self] _ in self?.ready() }
        readAhead.prefetch()
    }

    /// Stops the reader: its files are let go on the reader pool.
    deinit { readAhead.cancel() }

    /// The reader has something for a read that said it would block.
    private func ready() {
        let promise = lock.withLock { () -> EventLoopPromise<Void>? in
            defer { waiting = nil }
            if waiting == nil { readyEarly = true }
            return waiting
        }
        promise?.succeed(())
    }

    /// Writes the `remaining` bytes of the body into `writer`, a chunk at a time, calling
    /// `handedOver` with each chunk's size. The body ends with its last chunk's write: a server
    /// that answers as soon as it has every byte must not find the request still open, or
    /// AsyncHTTPClient keeps the connection leased (8 such sends emptied its pool in W5's 100 KiB row).
    func write(
        into writer: HTTPClient.Body.StreamWriter, remaining: Int64, handedOver: @escaping @Sendable (Int) -> Void
    ) -> EventLoopFuture<Void> {
        guard remaining > 0 else { return loop.makeSucceededVoidFuture() }
        if ring.isEmpty {
            let allocator = ByteBufferAllocator()
            ring = [allocator.buffer(capacity: chunkSize), allocator.buffer(capacity: chunkSize)]
        }
        let slot = nextSlot
        nextSlot = (nextSlot + 1) % ring.count
        ring[slot].clear(minimumCapacity: chunkSize)
        var result = BodyReadAhead.ReadResult.end
        let (size, readAhead) = (chunkSize, self.readAhead!)
        ring[slot].writeWithUnsafeMutableBytes(minimumWritableBytes: size) { pointer in
            result = readAhead.read(into: pointer.baseAddress!, capacity: size)
            if case .bytes(let count) = result { return count }
            return 0
        }
        switch result {
        case .bytes(let count):
            handedOver(count)
            let left = remaining - Int64(count)
            let written = writer.write(.byteBuffer(ring[slot]))
            return left <= 0 ? written : written.flatMap { [self] in write(into: writer, remaining: left, handedOver: handedOver) }
        case .end:
            return loop.makeSucceededVoidFuture()  // short: the length check fails the send
        case .failed(let error):
            return loop.makeFailedFuture(error)
        case .wouldBlock:
            let promise = lock.withLock { () -> EventLoopPromise<Void>? in
                if readyEarly {
                    readyEarly = false
                    return nil
                }
                waiting = loop.makePromise(of: Void.self)
                return waiting
            }
            guard let promise else { return write(into: writer, remaining: remaining, handedOver: handedOver) }
            return promise.futureResult.flatMap { [self] in write(into: writer, remaining: remaining, handedOver: handedOver) }
        }
    }
}
#endif
