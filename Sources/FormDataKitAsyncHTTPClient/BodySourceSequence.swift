import FormDataKit
import Foundation
import NIOCore
import NIOPosix

/// A ``BodySource`` as the `AsyncSequence` of `ByteBuffer`s AsyncHTTPClient streams, read in
/// chunks by the engine's ``BodyReader`` on NIO's blocking-I/O thread pool (never on the
/// cooperative pool). Each iteration reads the files again, so a retry or a redirect sends
/// the same bytes. A file whose size changed since the length was computed ends the sequence
/// with ``FormDataError/fileChanged(path:expectedSize:actualSize:)`` — the body is never sent
/// with a wrong length.
struct BodySourceSequence: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let source: BodySource
    let chunkSize: Int
    let threadPool: NIOThreadPool
    /// Called with the size of each chunk as it is handed to the client.
    let onChunk: @Sendable (Int) -> Void
    /// Called with the error that ended an iteration (before it is thrown to the client).
    let onError: @Sendable (FormDataError) -> Void

    func makeAsyncIterator() -> Iterator {
        Iterator(sequence: self)
    }

    /// Reads the segments in order; one chunk never spans two segments.
    struct Iterator: AsyncIteratorProtocol {
        let sequence: BodySourceSequence
        private let reader: ChunkReader

        init(sequence: BodySourceSequence) {
            self.sequence = sequence
            self.reader = ChunkReader(sequence.source.makeReader(chunkSize: sequence.chunkSize), chunkSize: sequence.chunkSize)
        }

        mutating func next() async throws -> ByteBuffer? {
            do {
                // Every read (file ranges from disk) on NIO's blocking-I/O pool.
                let reader = self.reader
                guard let chunk = try await sequence.threadPool.runIfActive({ try reader.next() }) else { return nil }
                sequence.onChunk(chunk.readableBytes)
                return chunk
            } catch let error as FormDataError {
                sequence.onError(error)
                throw error
            }
        }
    }
}

/// The engine's ``BodyReader`` (the one pull-based walk over a body's segments) filling
/// `ByteBuffer`s, one read in flight at a time.
///
/// Chunks are read into a ring of two buffers that are reused once the client has written them
/// (`clear()` keeps a buffer's memory when nothing else holds it, and allocates afresh when the
/// previous use is still queued), so a long upload does not allocate a new chunk per read.
private final class ChunkReader: @unchecked Sendable {
    // `@unchecked`: the iterator that owns it awaits each read before starting the next one, so
    // the reader and the ring are never used from two threads at once.
    private let reader: BodyReader
    private let chunkSize: Int
    private var ring: [ByteBuffer] = []
    private var nextSlot = 0

    init(_ reader: BodyReader, chunkSize: Int) {
        self.reader = reader
        self.chunkSize = chunkSize
    }

    /// The next chunk (at most `chunkSize` bytes, never spanning two segments), nil at the end.
    func next() throws(FormDataError) -> ByteBuffer? {
        if ring.isEmpty {
            let allocator = ByteBufferAllocator()
            ring = [allocator.buffer(capacity: chunkSize), allocator.buffer(capacity: chunkSize)]
        }
        let slot = nextSlot
        nextSlot = (nextSlot + 1) % ring.count
        ring[slot].clear(minimumCapacity: chunkSize)
        var failure: FormDataError?
        let size = chunkSize
        let reader = self.reader
        let count = ring[slot].writeWithUnsafeMutableBytes(minimumWritableBytes: size) { pointer in
            do throws(FormDataError) {
                return try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: pointer[0..<size]))
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        return count == 0 ? nil : ring[slot]
    }
}
