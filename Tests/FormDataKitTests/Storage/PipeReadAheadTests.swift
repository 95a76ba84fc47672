#if os(Linux)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import CFileSpace
import Glibc
import Testing
@testable import FormDataKit

/// The pipe read-ahead (Linux) behind the curl transport's read callback for bodies with file
/// parts: exact bytes in order across many pipe-fulls, restarts at any offset, read errors in
/// order, the limit on pipes alive, and no descriptor left behind.
@Suite("Pipe read-ahead", .serialized)
struct PipeReadAheadTests {
    typealias Drain = BodyReadAheadTests

    /// A body larger than any pipe (a 3 MiB file between bytes, then a small file and an empty one).
    static func largeBody(in scratch: Scratch) throws -> BodySource {
        let big = try scratch.write("big.bin", TransportTestSupport.randomData(size: 3 << 20, seed: 11))
        let small = try scratch.write("small.bin", TransportTestSupport.randomData(size: 5_000, seed: 12))
        let empty = try scratch.write("empty.bin", Data())
        return BodySource(segments: [
            BodySegment(.bytes(Data("--head\r\n".utf8))),
            BodySegment(.file(FileRange(path: big, length: 3 << 20, expectedFileSize: 3 << 20))),
            BodySegment(.bytes(Data("\r\n--middle\r\n".utf8))),
            BodySegment(.file(FileRange(path: small, offset: 100, length: 4_000, expectedFileSize: 5_000))),
            BodySegment(.file(FileRange(path: empty, length: 0, expectedFileSize: 0))),
            BodySegment(.bytes(Data("\r\n--tail--\r\n".utf8))),
        ])
    }

    /// A pipe read-ahead of `source` with a budget of its own (other tests' sends use the shared one).
    static func make(_ source: BodySource, ready: DispatchSemaphore) throws -> PipeReadAhead {
        try #require(PipeReadAhead.make(source: source, budget: PipeReadAhead.Budget(limit: 1)) { _ in ready.signal() })
    }

    /// Bodies that end in a file range, and in an empty file after one.
    static func fileEndedBodies(in scratch: Scratch) throws -> [BodySource] {
        let file = try scratch.write("end.bin", TransportTestSupport.randomData(size: 300_000, seed: 13))
        let empty = try scratch.write("end-empty.bin", Data())
        let range = FileRange(path: file, offset: 7, length: 299_993, expectedFileSize: 300_000)
        return [
            BodySource(segments: [BodySegment(.file(range))]),
            BodySource(segments: [
                BodySegment(.bytes(Data("x".utf8))), BodySegment(.file(range)),
                BodySegment(.file(FileRange(path: empty, length: 0, expectedFileSize: 0))),
            ]),
        ]
    }

    /// Every body above: mixed bytes and files, the large one, and those ending in a file.
    static func allBodies(in scratch: Scratch) throws -> [BodySource] {
        [try BodyReadAheadTests.mixedBody(in: scratch), try largeBody(in: scratch)] + (try fileEndedBodies(in: scratch))
    }

    @Test("bodies of bytes and file ranges come out whole and in order, in small and large reads")
    func wholeBody() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        for source in try Self.allBodies(in: scratch) {
            for capacity in [777, 256 << 10] {
                let ready = DispatchSemaphore(value: 0)
                let readAhead = try Self.make(source, ready: ready)
                readAhead.prefetch()
                #expect(try Drain.drain(readAhead, ready: ready, capacity: capacity).get() == source.readAll())
            }
        }
    }

    @Test("restart at any offset (inside bytes, inside a file range, on a boundary, the end) gives the rest exactly")
    func restartAtOffsets() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let source = try Self.largeBody(in: scratch)
        let whole = try source.readAll()
        let ready = DispatchSemaphore(value: 0)
        let readAhead = try Self.make(source, ready: ready)
        readAhead.prefetch()
        // Restart while the first fill may still be writing: its bytes must not leak into the new pipe.
        var buffer = [UInt8](repeating: 0, count: 100)
        _ = buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 100) }
        for offset in [0, 3, 8, 8 + (3 << 20), 1 << 20, (3 << 20) + 30, whole.count - 1, whole.count] {
            readAhead.restart(at: UInt64(offset))
            #expect(
                try Drain.drain(readAhead, ready: ready, capacity: 65_536).get() == whole.subdata(in: offset..<whole.count),
                "offset \(offset)")
        }
    }

    @Test("a file that changed size: the bytes before it, then fileChanged (as readAll reports it)")
    func errorInOrder() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("grows.bin", Data(count: 200_000))
        let source = BodySource(segments: [
            BodySegment(.bytes(Data("before".utf8))), BodySegment(.file(FileRange(path: path, length: 200_000, expectedFileSize: 200_000))),
        ])
        try Data(count: 200_005).write(to: URL(fileURLWithPath: path))
        let ready = DispatchSemaphore(value: 0)
        let readAhead = try Self.make(source, ready: ready)
        #expect(Drain.drain(readAhead, ready: ready) == .failure(.fileChanged(path: path, expectedSize: 200_000, actualSize: 200_005)))
        // A file cut short while its range is read.
        let short = try scratch.write("short.bin", Data(count: 1_000))
        let cut = BodySource(segments: [BodySegment(.file(FileRange(path: short, length: 900_000, expectedFileSize: 1_000)))])
        let second = try Self.make(cut, ready: ready)
        if case .failure(.fileChanged(let failedPath, _, _)) = Drain.drain(second, ready: ready) {
            #expect(failedPath == short)
        } else {
            Issue.record("a short file was not reported as changed")
        }
    }

    @Test("a file cut short while its bytes wait in the pipe: they are read, the last byte never comes, fileChanged does")
    func cutShortInThePipe() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("cut.bin", TransportTestSupport.randomData(size: 200_000, seed: 14))
        let source = BodySource(segments: [
            BodySegment(.file(FileRange(path: path, length: 200_000, expectedFileSize: 200_000))), BodySegment(.bytes(Data("tail".utf8))),
        ])
        let ready = DispatchSemaphore(value: 0)
        let readAhead = try Self.make(source, ready: ready)
        readAhead.prefetch()
        // Wait (boundedly) until all but the held last byte is in the pipe, unread: milliseconds
        // for a pool worker; a minute (it was 10 s) for one a busy machine schedules late.
        let deadline = Date().addingTimeInterval(60)
        var buffered: Int32 = 0
        while ioctl(readAhead.pipeDescriptors[0], UInt(FIONREAD), &buffered) == 0, buffered < 200_003, Date() < deadline { usleep(1_000) }
        try #require(buffered == 200_003)
        // The file's pages are in the pipe: cutting the file zeroes the tail of the page it now ends in.
        try FileHandle(forWritingTo: URL(fileURLWithPath: path)).truncate(atOffset: 100_100)
        #expect(Drain.drain(readAhead, ready: ready) == .failure(.fileChanged(path: path, expectedSize: 200_000, actualSize: 100_100)))
    }

    /// Whether descriptor `fd` still refers to the pipe `identity` (it may have been reused since).
    static func stillOpen(_ fd: Int32, as identity: (device: UInt64, inode: UInt64)) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && UInt64(info.st_dev) == identity.device && UInt64(info.st_ino) == identity.inode
    }

    @Test("at most its budget's pipes at once; a read-ahead's pipe is closed when it goes, and its place freed")
    func budgetAndDescriptors() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let source = try BodyReadAheadTests.mixedBody(in: scratch)
        let budget = PipeReadAhead.Budget(limit: 3)
        var pipes: [(descriptors: [Int32], identity: (device: UInt64, inode: UInt64))] = []
        do {
            var alive: [PipeReadAhead] = []
            while alive.count <= budget.limit, let readAhead = PipeReadAhead.make(source: source, budget: budget, onReady: { _ in }) {
                alive.append(readAhead)
                readAhead.prefetch()
            }
            #expect(alive.count == 3)
            #expect(budget.count == 3)
            pipes = alive.map { ($0.pipeDescriptors, $0.pipeIdentity) }
            for pipe in pipes { #expect(pipe.descriptors.allSatisfy { Self.stillOpen($0, as: pipe.identity) }) }
            for readAhead in alive { readAhead.cancel() }
        }
        // A worker still filling holds the pipe until it returns: wait for that, boundedly (a
        // minute, as above).
        let deadline = Date().addingTimeInterval(60)
        while budget.count > 0 || pipes.contains(where: { pipe in pipe.descriptors.contains { Self.stillOpen($0, as: pipe.identity) } }),
            Date() < deadline
        {
            usleep(1_000)
        }
        #expect(budget.count == 0)
        for pipe in pipes { #expect(!pipe.descriptors.contains { Self.stillOpen($0, as: pipe.identity) }) }
        #expect(PipeReadAhead.make(source: source, budget: budget, onReady: { _ in }) != nil)
    }

    @Test("cancel: no wake-up after it, reads end")
    func cancelEnds() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let source = try Self.largeBody(in: scratch)
        let readAhead = try #require(PipeReadAhead.make(source: source, budget: PipeReadAhead.Budget(limit: 1)) { _ in })
        readAhead.cancel()
        readAhead.prefetch()
        var buffer = [UInt8](repeating: 0, count: 1_000)
        var result = buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 1_000) }
        while case .bytes = result { result = buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 1_000) } }
        #expect(result == .end)
    }

    @Test("a file system that cannot splice: its file ranges are read and written, the body comes out whole from any offset")
    func withoutSplicing() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        for source in try Self.allBodies(in: scratch) {
            let whole = try source.readAll()
            for offset in [0, 1, whole.count / 2, whole.count - 1] where offset >= 0 && offset < whole.count {
                #expect(try Self.writeThroughPipe(source, from: UInt64(offset), splices: false) == whole.dropFirst(offset))
            }
        }
    }

    /// All of `source` from `offset` written by one ``PipeBodyWriter`` into a small pipe, drained
    /// each time it is full, then finished (on this thread: no read-ahead around it).
    static func writeThroughPipe(_ source: BodySource, from offset: UInt64, splices: Bool) throws -> Data {
        var ends: [Int32] = [-1, -1]
        try #require(cfilespace_pipe(&ends, 0) > 0)
        defer { for end in ends { close(end) } }
        var writer = PipeBodyWriter(source: source, from: offset, splices: splices)
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        func drain() {
            while true {
                let got = buffer.withUnsafeMutableBytes { Glibc.read(ends[0], $0.baseAddress!, $0.count) }
                guard got > 0 else { return }
                out.append(contentsOf: buffer[0..<got])
            }
        }
        var outcome = PipeBodyWriter.Outcome.yielded
        while outcome == .yielded || outcome == .pipeFull {
            outcome = try writer.write(into: ends[1], capacity: 64 << 10) { _ in true }
            drain()
        }
        try writer.finish(into: ends[1])
        drain()
        return out
    }
}
#endif
