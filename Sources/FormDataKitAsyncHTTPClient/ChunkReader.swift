#if AsyncHTTPClient
import FormDataKit
import Foundation
import NIOCore

/// The engine's ``BodyReader`` (the one pull-based walk over a body's segments) filling
/// `ByteBuffer`s, one read in flight at a time.
///
/// Chunks are read into a ring of two buffers that are reused once the client has written them
/// (`clear()` keeps a buffer's memory when nothing else holds it, and allocates afresh when the
/// previous use is still queued), so a long upload does not allocate a new chunk per read.
final class ChunkReader: @unchecked Sendable {
    // `@unchecked`: the exchange that owns it writes each chunk before reading the next one, so
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
#endif
