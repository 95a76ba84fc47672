@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// The read-ahead behind the curl transport's read callback: exact bytes in order, restarts at
/// any offset, read errors in order, bodies in memory copied without a worker; and the pool's
/// replacement of a stalled worker.
@Suite("Body read-ahead and its reader pool")
struct BodyReadAheadTests {
    /// A body of bytes and file ranges (one starting inside its file), 2 files in all.
    static func mixedBody(in scratch: Scratch) throws -> BodySource {
        let first = try scratch.write("one.bin", TransportTestSupport.randomData(size: 70_001, seed: 5))
        let second = try scratch.write("two.bin", TransportTestSupport.randomData(size: 9_000, seed: 6))
        return BodySource(segments: [
            BodySegment(.bytes(Data("--head\r\n".utf8))),
            BodySegment(.file(FileRange(path: first, length: 70_001, expectedFileSize: 70_001))),
            BodySegment(.bytes(Data("\r\n--middle\r\n".utf8))),
            BodySegment(.file(FileRange(path: second, offset: 1_000, length: 5_000, expectedFileSize: 9_000))),
            BodySegment(.bytes(Data("\r\n--tail--\r\n".utf8))),
        ])
    }

    /// Reads `readAhead` to its end (or error) in pieces of `capacity`, waiting for `ready` when told to.
    static func drain(_ readAhead: BodyReadAhead, ready: DispatchSemaphore, capacity: Int = 777) -> Result<Data, FormDataError> {
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let result = buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: capacity) }
            switch result {
            case .bytes(let count): out.append(contentsOf: buffer[0..<count])
            case .end: return .success(out)
            case .failed(let error): return .failure(error)
            case .wouldBlock:
                // A chunk read on the shared pool takes milliseconds; a minute (it was 10 s) is a
                // bound for a lost wake-up, wide enough for a pool shared with other suites on a
                // machine whose cores are busy.
                if ready.wait(timeout: .now() + 60) == .timedOut {
                    return .failure(.cancelled)  // never told to go on: a lost wake-up
                }
            }
        }
    }

    @Test("a body of bytes and file ranges comes out whole and in order, in odd chunk and read sizes")
    func wholeBody() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let source = try Self.mixedBody(in: scratch)
        for chunkSize in [1, 1_000, 64 << 10, 1 << 20] {
            let ready = DispatchSemaphore(value: 0)
            let readAhead = BodyReadAhead(source: source, chunkSize: chunkSize) { _ in ready.signal() }
            readAhead.prefetch()
            #expect(try Self.drain(readAhead, ready: ready, capacity: chunkSize == 1 ? 5_000 : 777).get() == source.readAll())
        }
    }

    @Test("restart at any offset (inside bytes, inside a file range, on a boundary, the end) gives the rest exactly")
    func restartAtOffsets() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let source = try Self.mixedBody(in: scratch)
        let whole = try source.readAll()
        let ready = DispatchSemaphore(value: 0)
        let readAhead = BodyReadAhead(source: source, chunkSize: 4_096) { _ in ready.signal() }
        _ = Self.drain(readAhead, ready: ready)
        for offset in [0, 3, 8, 8 + 70_001, 40_000, 70_020, whole.count - 1, whole.count] {
            readAhead.restart(at: UInt64(offset))
            #expect(try Self.drain(readAhead, ready: ready).get() == whole.subdata(in: offset..<whole.count), "offset \(offset)")
        }
    }

    @Test("a file that changed size: the bytes before it, then fileChanged (as readAll reports it)")
    func errorInOrder() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("grows.bin", Data(count: 10_000))
        let source = BodySource(segments: [
            BodySegment(.bytes(Data("before".utf8))), BodySegment(.file(FileRange(path: path, length: 10_000, expectedFileSize: 10_000))),
        ])
        try Data(count: 10_005).write(to: URL(fileURLWithPath: path))
        let ready = DispatchSemaphore(value: 0)
        let readAhead = BodyReadAhead(source: source, chunkSize: 4_096) { _ in ready.signal() }
        var first = [UInt8](repeating: 0, count: 6)
        var result = first.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 6) }
        if result == .wouldBlock {
            _ = ready.wait(timeout: .now() + 60)
            result = first.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 6) }
        }
        #expect(result == .bytes(6))
        #expect(Self.drain(readAhead, ready: ready) == .failure(.fileChanged(path: path, expectedSize: 10_000, actualSize: 10_005)))
    }

    @Test("a file cut short or grown after it was opened fails the read, naming it and its size, before its last bytes go")
    func changedAfterOpenFails() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        for (label, newSize) in [("shorter", 150_000), ("longer", 250_000)] {
            let path = try scratch.write("\(label).bin", TransportTestSupport.randomData(size: 200_000, seed: 23))
            let head = Data("--head\r\n".utf8)
            let source = BodySource(segments: [
                BodySegment(.bytes(head)),
                BodySegment(.file(FileRange(path: path, length: 200_000, expectedFileSize: 200_000))),
                BodySegment(.bytes(Data("\r\n--tail--\r\n".utf8))),
            ])
            let ready = DispatchSemaphore(value: 0)
            let readAhead = BodyReadAhead(source: source, chunkSize: 32 << 10) { _ in ready.signal() }
            var delivered = 0
            var changed = false
            var result = BodyReadAhead.ReadResult.end
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            reading: while true {
                result = buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 16 << 10) }
                switch result {
                case .bytes(let count):
                    delivered += count
                    // The file is open once its first bytes came: change it now.
                    if !changed, delivered > head.count {
                        #expect(truncate(path, off_t(newSize)) == 0)
                        changed = true
                    }
                case .wouldBlock: #expect(ready.wait(timeout: .now() + 60) == .success)
                case .end, .failed: break reading
                }
            }
            #expect(result == .failed(.fileChanged(path: path, expectedSize: 200_000, actualSize: UInt64(newSize))), "\(label)")
            // Never the whole file: its last bytes wait for its size.
            #expect(delivered < head.count + 200_000, "\(label)")
        }
    }

    @Test("a body in memory is copied on the caller's thread: never wouldBlock, no worker")
    func inMemory() throws {
        let pool = BodyReaderPool(baseWorkers: 1, maximumWorkers: 1)
        let data = TransportTestSupport.randomData(size: 300_000, seed: 7)
        let source = BodySource(segments: [BodySegment(.bytes(data.prefix(100))), BodySegment(.bytes(data.dropFirst(100)))])
        let readAhead = BodyReadAhead(source: source, chunkSize: 65_536, pool: pool) { _ in Issue.record("no wake-up expected") }
        readAhead.prefetch()
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while case .bytes(let count) = buffer.withUnsafeMutableBytes({ readAhead.read(into: $0.baseAddress!, capacity: 65_536) }) {
            out.append(contentsOf: buffer[0..<count])
        }
        #expect(out == data)
        readAhead.restart(at: 150_000)
        #expect(buffer.withUnsafeMutableBytes { readAhead.read(into: $0.baseAddress!, capacity: 10) } == .bytes(10))
        #expect(Array(buffer[0..<10]) == Array(data[150_000..<150_010]))
        #expect(pool.workerThreads == 0)
    }

    @Test("a worker stuck in one job is replaced (up to the maximum): the next job still runs")
    func stalledWorkerReplaced() {
        let pool = BodyReaderPool(baseWorkers: 1, maximumWorkers: 2, stallThreshold: 0.1)
        let stuck = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)
        // The stuck jobs are let go by the test (`stuck.signal()` below); their own limit is far
        // beyond the test's waits so that none returns by itself while the test relies on it
        // (10 s did, on a machine whose cores were busy, and a waiting job then ran).
        let stuckLimit: Double = 600
        // A minute for what takes milliseconds (the replacement comes after the 0.1 s threshold):
        // a bound only so that a broken pool fails instead of hanging.
        let eventBound: Double = 60
        pool.submit { _ = stuck.wait(timeout: .now() + stuckLimit) }
        pool.submit { ran.signal() }
        #expect(ran.wait(timeout: .now() + eventBound) == .success)
        #expect(pool.workerThreads == 2)
        // At the maximum, with both workers stuck, a job waits for one to return. (A window for
        // it to run wrongly; a slow machine can only make it miss that, never fail.)
        pool.submit { _ = stuck.wait(timeout: .now() + stuckLimit) }
        pool.submit { ran.signal() }
        #expect(ran.wait(timeout: .now() + 0.5) == .timedOut)
        #expect(pool.workerThreads == 2)
        stuck.signal()
        #expect(ran.wait(timeout: .now() + eventBound) == .success)
        stuck.signal()
    }

    #if os(Linux)
    @Test("a worker runs as background work (SCHED_BATCH): woken by the transport's thread, it does not preempt it")
    func workerIsBatchScheduled() {
        let pool = BodyReaderPool(baseWorkers: 1, maximumWorkers: 1)
        let policy = Locked<Int32>(-1)
        let ran = DispatchSemaphore(value: 0)
        pool.submit {
            policy.withLock { $0 = sched_getscheduler(0) }
            ran.signal()
        }
        #expect(ran.wait(timeout: .now() + 5) == .success)
        #expect(policy.current == 3)  // SCHED_BATCH (sched(7)); SCHED_OTHER is 0
    }
    #endif
}
