import FormDataKit
import Foundation
import NIOCore
import NIOPosix

/// A ``BodySource`` as the `AsyncSequence` of `ByteBuffer`s AsyncHTTPClient streams: literal
/// segments as they are, file ranges read in chunks on NIO's blocking-I/O thread pool (never on
/// the cooperative pool). Each iteration reads the files again, so a retry or a redirect sends
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
        private var segmentIndex = 0
        private var offsetInSegment = 0
        private var file: OpenFile?

        init(sequence: BodySourceSequence) { self.sequence = sequence }

        mutating func next() async throws -> ByteBuffer? {
            do {
                guard let chunk = try await nextChunk() else { return nil }
                sequence.onChunk(chunk.readableBytes)
                return chunk
            } catch let error as FormDataError {
                sequence.onError(error)
                throw error
            }
        }

        private mutating func nextChunk() async throws -> ByteBuffer? {
            let segments = sequence.source.segments
            while segmentIndex < segments.count {
                switch segments[segmentIndex].content {
                case .bytes(let data):
                    if offsetInSegment < data.count {
                        let end = Swift.min(data.count, offsetInSegment + sequence.chunkSize)
                        let start = data.startIndex + offsetInSegment
                        let buffer = ByteBuffer(bytes: data[start..<(data.startIndex + end)])
                        offsetInSegment = end
                        return buffer
                    }
                case .file(let range):
                    if file == nil {
                        file = try await sequence.threadPool.runIfActive { try OpenFile(range) }
                    }
                    if let file, file.remaining > 0 {
                        let size = Int(Swift.min(UInt64(sequence.chunkSize), file.remaining))
                        return try await sequence.threadPool.runIfActive { try file.read(upTo: size) }
                    }
                }
                file = nil
                offsetInSegment = 0
                segmentIndex += 1
            }
            return nil
        }
    }
}

/// One open file range, read by one iterator at a time (one read in flight).
///
/// Chunks are read into a ring of two buffers that are reused once the client has written them
/// (`clear()` keeps a buffer's memory when nothing else holds it, and allocates afresh when the
/// previous use is still queued), so a long upload does not allocate a new chunk per read.
private final class OpenFile: @unchecked Sendable {
    // `@unchecked`: the iterator that owns it awaits each read before starting the next one, so
    // the reader and the ring are never used from two threads at once.
    private let file: OpenedFileRange
    private var ring: [ByteBuffer] = []
    private var nextSlot = 0

    init(_ range: FileRange) throws(FormDataError) {
        file = try OpenedFileRange(range)
    }

    var remaining: UInt64 { file.remaining }

    /// The next chunk of at most `size` bytes (the size is checked again after the last one).
    func read(upTo size: Int) throws(FormDataError) -> ByteBuffer {
        if ring.isEmpty {
            let allocator = ByteBufferAllocator()
            ring = [allocator.buffer(capacity: size), allocator.buffer(capacity: size)]
        }
        let slot = nextSlot
        nextSlot = (nextSlot + 1) % ring.count
        ring[slot].clear(minimumCapacity: size)
        var failure: FormDataError?
        ring[slot].writeWithUnsafeMutableBytes(minimumWritableBytes: size) { pointer in
            do throws(FormDataError) {
                return try file.read(into: UnsafeMutableRawBufferPointer(rebasing: pointer[0..<size]))
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        return ring[slot]
    }
}
