@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// The memory read-ahead chunks come from: size classes, reuse of returned chunks within the
/// kept-bytes limit, and bodies read one after another through reused chunks staying exact.
@Suite("Read-ahead chunk memory")
struct ReadAheadMemoryTests {
    @Test("size classes are powers of two of at least 16 KiB")
    func sizeClasses() {
        #expect(ReadAheadMemory.capacity(for: 1) == 16 << 10)
        #expect(ReadAheadMemory.capacity(for: 16 << 10) == 16 << 10)
        #expect(ReadAheadMemory.capacity(for: (16 << 10) + 1) == 32 << 10)
        #expect(ReadAheadMemory.capacity(for: 256 << 10) == 256 << 10)
        #expect(ReadAheadMemory.capacity(for: 300_000) == 512 << 10)
        // No power of two past Int's range to round to: the count itself, never a trap.
        #expect(ReadAheadMemory.capacity(for: Int.max) == Int.max)
    }

    @Test("a returned chunk is handed out again for its size class, and only for it")
    func reuse() {
        let memory = ReadAheadMemory(keptByteLimit: 1 << 20)
        let first = memory.take(byteCount: 200_000)
        #expect(first.capacity == 256 << 10)
        memory.give(first.memory, capacity: first.capacity)
        #expect(memory.keptByteCount == 256 << 10)
        let other = memory.take(byteCount: 64 << 10)
        #expect(other.memory != first.memory)
        let again = memory.take(byteCount: 150_000)
        #expect(again.memory == first.memory)
        #expect(memory.keptByteCount == 0)
        memory.give(other.memory, capacity: other.capacity)
        memory.give(again.memory, capacity: again.capacity)
    }

    @Test("a chunk outside the size classes is freed, never kept")
    func outsideSizeClasses() {
        let memory = ReadAheadMemory(keptByteLimit: 1 << 20)
        // 48 KiB is no power of two: no take hands out such a chunk, so none is kept for one.
        let odd = UnsafeMutableRawPointer.allocate(byteCount: 48 << 10, alignment: 16)
        memory.give(odd, capacity: 48 << 10)
        #expect(memory.keptByteCount == 0)
        let chunk = memory.take(byteCount: 48 << 10)
        #expect(chunk.capacity == 64 << 10)
        memory.give(chunk.memory, capacity: chunk.capacity)
        #expect(memory.keptByteCount == 64 << 10)
    }

    @Test("no more than the limit is kept: chunks beyond it are freed")
    func keptLimit() {
        let memory = ReadAheadMemory(keptByteLimit: 512 << 10)
        let chunks = (0..<4).map { _ in memory.take(byteCount: 256 << 10) }
        for chunk in chunks { memory.give(chunk.memory, capacity: chunk.capacity) }
        #expect(memory.keptByteCount == 512 << 10)
    }

    @Test("bodies read one after another take their chunks from the store and give them back, and each comes out exact")
    func readAheadsReuseChunks() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let memory = ReadAheadMemory(keptByteLimit: 8 << 20)
        // Two chunks of the size the read-aheads below use, kept before any of them runs: a
        // read-ahead that allocated its own chunks instead would leave more kept after it.
        let seeded = [memory.take(byteCount: 256 << 10), memory.take(byteCount: 256 << 10)]
        for chunk in seeded { memory.give(chunk.memory, capacity: chunk.capacity) }
        // A pool of its own: the shared one may be held by other tests' blocked reads.
        let pool = BodyReaderPool(baseWorkers: 1, maximumWorkers: 1)
        var kept: [Int] = []
        for seed in 1...3 {
            let size = 600_000 + seed
            let path = try scratch.write("body-\(seed).bin", TransportTestSupport.randomData(size: size, seed: UInt64(seed)))
            let source = BodySource(segments: [
                BodySegment(.bytes(Data("head\r\n".utf8))),
                BodySegment(.file(FileRange(path: path, length: UInt64(size), expectedFileSize: UInt64(size)))),
            ])
            let ready = DispatchSemaphore(value: 0)
            var readAhead: BodyReadAhead? = BodyReadAhead(source: source, chunkSize: 256 << 10, pool: pool, memory: memory) { _ in
                ready.signal()
            }
            readAhead?.prefetch()
            let bytes = try BodyReadAheadTests.drain(readAhead!, ready: ready, capacity: 65_536).get()
            #expect(bytes == (try source.readAll()), "body \(seed) differs")
            // It holds what it read into until it is released: taken from the store.
            #expect(memory.keptByteCount <= 256 << 10, "body \(seed)'s chunks did not come from the store")
            // The worker that read the end may still hold the read-ahead for a moment after
            // waking us: its chunks come back when the last reference goes.
            weak let released = readAhead
            readAhead = nil
            // (A moment; a minute bounds it, for a worker a busy machine schedules late.)
            let deadline = Date().addingTimeInterval(60)
            while released != nil, Date() < deadline { usleep(1_000) }
            #expect(released == nil)
            kept.append(memory.keptByteCount)
        }
        #expect(kept == [512 << 10, 512 << 10, 512 << 10])
    }
}

/// The response head's numbers and encodings read with optional whitespace around them.
@Suite("Response head values")
struct ResponseHeadValueTests {
    @Test("Content-Length with spaces and tabs around it is a number; anything else is none")
    func contentLength() {
        func length(_ value: String?) -> UInt64? {
            TransportResponseHead(statusCode: 200, headers: value.map { ["content-length": $0] } ?? [:]).contentLength
        }
        #expect(length("42") == 42)
        #expect(length(" \t42 \t") == 42)
        #expect(length("") == nil)
        #expect(length(" ") == nil)
        #expect(length("4 2") == nil)
        #expect(length("-1") == nil)
        #expect(length(nil) == nil)
    }

    @Test("a content encoding counts unless it is empty or identity, in any case")
    func contentEncoding() {
        func encoded(_ value: String) -> Bool {
            TransportResponseHead(statusCode: 200, headers: ["Content-Encoding": value]).isContentEncoded
        }
        #expect(encoded("gzip"))
        #expect(encoded(" br\t"))
        #expect(!encoded(" Identity "))
        #expect(!encoded("IDENTITY"))
        #expect(!encoded(" \t "))
        #expect(!TransportResponseHead(statusCode: 200, headers: [:]).isContentEncoded)
    }
}
