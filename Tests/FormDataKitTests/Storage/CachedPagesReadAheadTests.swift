#if os(Linux)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import CFileSpace
import Glibc
import Testing
@testable import FormDataKit

/// The read of a body's cached pages on the sending thread (Linux), behind the curl transport's
/// read callback for a larger body built on the caller's or a dispatch thread: exact bytes, a
/// restart anywhere, the pool taking over from the exact byte a page is missing at, a file that
/// changed size failing before its last bytes go, and the limit on bodies held open.
@Suite("Cached pages read-ahead", .serialized)
struct CachedPagesReadAheadTests {
    typealias Drain = BodyReadAheadTests

    /// Opens `source` with a budget of its own and a pipe read-ahead (budget of its own) as the fallback.
    static func open(_ source: BodySource, ready: DispatchSemaphore) throws -> CachedPagesReadAhead {
        let readAhead = try #require(CachedPagesReadAhead.open(source, budget: ReadAheadBudget(limit: 1)))
        let pipes = ReadAheadBudget(limit: 1)
        readAhead.start(onReady: { _ in ready.signal() }) { offset, relay in
            PipeReadAhead.make(source: source, budget: pipes, from: offset, onReady: relay)
        }
        return readAhead
    }

    /// Whether files written in the scratch directory are read without waiting here (not tmpfs);
    /// records (under `.ci/run`) or prints the skip when not.
    static func scratchReadsWithoutWaiting(_ scratch: Scratch) throws -> Bool {
        let path = try scratch.write("probe.bin", Data([1]))
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        defer { close(descriptor) }
        var probe: UInt8 = 0
        if cfilespace_read_cached(descriptor, &probe, 1, 0) == 1 { return true }
        let note = "the scratch directory does not read files without waiting (tmpfs): bodies there go to the pool's read-ahead"
        if RealServers.required { Issue.record("\(note)") } else { print("skipped: \(note)") }
        return false
    }

    @Test("bodies of bytes and file ranges come out whole and in order, in small and large reads, with no hand-over")
    func wholeBody() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        guard try Self.scratchReadsWithoutWaiting(scratch) else { return }
        for source in try PipeReadAheadTests.allBodies(in: scratch) {
            for capacity in [777, 256 << 10] {
                let ready = DispatchSemaphore(value: 0)
                let readAhead = try Self.open(source, ready: ready)
                #expect(try Drain.drain(readAhead, ready: ready, capacity: capacity).get() == source.readAll())
                #expect(!readAhead.handedOver)
            }
        }
    }

    @Test("restart at any offset (inside bytes, inside a file range, on a boundary, the end) gives the rest exactly")
    func restartAtOffsets() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        guard try Self.scratchReadsWithoutWaiting(scratch) else { return }
        let source = try PipeReadAheadTests.largeBody(in: scratch)
        let whole = try source.readAll()
        let ready = DispatchSemaphore(value: 0)
        let readAhead = try Self.open(source, ready: ready)
        var buffer = [UInt8](repeating: 0, count: 100)
        _ = buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 100) }
        for offset in [0, 3, 8, 8 + (3 << 20), 1 << 20, (3 << 20) + 30, whole.count - 1, whole.count] {
            readAhead.restart(at: UInt64(offset))
            #expect(try Drain.drain(readAhead, ready: ready, capacity: 50_000).get() == whole[offset...])
        }
    }

    @Test("a file the system no longer holds in memory: the pool reads the rest, from the exact byte; a first page not held: not opened")
    func evictedFileIsHandedOver() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        guard let cached = try ScratchBytes.readableWithoutWaiting(count: 40_000, seed: 21),
            let evicted = try ScratchBytes.evicted(count: 2 << 20, seed: 22)
        else {
            let note = "no directory here both reads without waiting and drops files from memory: this test needs a disk file system"
            if RealServers.required { Issue.record("\(note)") } else { print("skipped: \(note)") }
            return
        }
        defer {
            cached.remove()
            evicted.remove()
        }
        let source = BodySource(segments: [
            BodySegment(.bytes(Data("--head\r\n".utf8))),
            BodySegment(.file(FileRange(path: cached.path, length: 40_000, expectedFileSize: 40_000))),
            BodySegment(.bytes(Data("\r\n--middle\r\n".utf8))),
            BodySegment(.file(FileRange(path: evicted.path, length: 2 << 20, expectedFileSize: 2 << 20))),
            BodySegment(.bytes(Data("\r\n--tail--\r\n".utf8))),
        ])
        // Each try opens the body, then the file is dropped (the open reads none of it) and the
        // body drained: exact bytes always, and a hand-over to the pool must be seen
        // (ScratchBytes.expectMissSeen: a miss starts the kernel's readahead, which can win).
        try ScratchBytes.expectMissSeen(evicted, "draining a body whose second file was dropped") {
            let ready = DispatchSemaphore(value: 0)
            let readAhead = try Self.open(source, ready: ready)
            guard try evicted.evictFromMemory() else { return false }
            #expect(try Drain.drain(readAhead, ready: ready, capacity: 64 << 10).get() == source.readAll())
            return readAhead.handedOver
        }
        // A body whose first file page is not in memory is not opened here at all.
        let evictedFirst = BodySource(segments: [
            BodySegment(.file(FileRange(path: evicted.path, length: 2 << 20, expectedFileSize: 2 << 20)))
        ])
        try ScratchBytes.expectMissSeen(evicted, "opening a body whose first file was dropped") {
            CachedPagesReadAhead.open(evictedFirst, budget: ReadAheadBudget(limit: 1)) == nil
        }
        // A file system that cannot promise a read without waiting: not opened either.
        if let inMemory = try ScratchBytes.onFileSystemWithoutNoWait(count: 40_000, seed: 23) {
            defer { inMemory.remove() }
            let source = BodySource(segments: [
                BodySegment(.file(FileRange(path: inMemory.path, length: 40_000, expectedFileSize: 40_000)))
            ])
            #expect(CachedPagesReadAhead.open(source, budget: ReadAheadBudget(limit: 1)) == nil)
        }
    }

    @Test("a file cut short or grown after it was opened fails the read, naming it and its size, before its last bytes go")
    func changedFileFails() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        guard try Self.scratchReadsWithoutWaiting(scratch) else { return }
        for (label, newSize) in [("shorter", 150_000), ("longer", 250_000)] {
            let path = try scratch.write("\(label).bin", TransportTestSupport.randomData(size: 200_000, seed: 23))
            let head = Data("--head\r\n".utf8)
            let source = BodySource(segments: [
                BodySegment(.bytes(head)),
                BodySegment(.file(FileRange(path: path, length: 200_000, expectedFileSize: 200_000))),
                BodySegment(.bytes(Data("\r\n--tail--\r\n".utf8))),
            ])
            let ready = DispatchSemaphore(value: 0)
            let readAhead = try Self.open(source, ready: ready)
            #expect(truncate(path, off_t(newSize)) == 0)
            var delivered = 0
            var result = BodyReadAhead.ReadResult.end
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            reading: while true {
                result = buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 64 << 10) }
                switch result {
                case .bytes(let count): delivered += count
                case .wouldBlock: #expect(ready.wait(timeout: .now() + 60) == .success)
                case .end, .failed: break reading
                }
            }
            #expect(result == .failed(.fileChanged(path: path, expectedSize: 200_000, actualSize: UInt64(newSize))), "\(label)")
            // Never the whole file: its last bytes wait for its size.
            #expect(delivered < head.count + 200_000, "\(label)")
        }
    }

    @Test("no more bodies held open than the budget allows; a file that is gone or changed, or no file, is left to the pool's read")
    func budgetAndRefusals() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        guard try Self.scratchReadsWithoutWaiting(scratch) else { return }
        let path = try scratch.write("file.bin", Data(repeating: 7, count: 1000))
        let source = BodySource(segments: [BodySegment(.file(FileRange(path: path, length: 1000, expectedFileSize: 1000)))])
        let budget = ReadAheadBudget(limit: 2)
        var first = CachedPagesReadAhead.open(source, budget: budget)
        let second = CachedPagesReadAhead.open(source, budget: budget)
        #expect(first != nil && second != nil)
        #expect(CachedPagesReadAhead.open(source, budget: budget) == nil)
        first = nil
        #expect(budget.count == 1)
        #expect(CachedPagesReadAhead.open(source, budget: budget) != nil)
        #expect(budget.count == 1)  // the one just made is gone again

        let gone = BodySource(segments: [BodySegment(.file(FileRange(path: path + ".gone", length: 1, expectedFileSize: 1)))])
        let changed = BodySource(segments: [BodySegment(.file(FileRange(path: path, length: 999, expectedFileSize: 999)))])
        let memoryOnly = BodySource(segments: [BodySegment(.bytes(Data("x".utf8)))])
        for refused in [gone, changed, memoryOnly] { #expect(CachedPagesReadAhead.open(refused, budget: budget) == nil) }
        #expect(budget.count == 1)
        _ = second
    }
}
#endif
