import CFileSpace
import Foundation
import Testing
@testable import FormDataKit

/// Reading a small body where it was built, only from what the system holds in memory: the
/// thread mark, the non-waiting read of one file range, and the curl transport's whole-body read
/// that falls back to the reader pool whenever a file would wait or fails.
@Suite("Reading a body without waiting")
struct ReadWithoutWaitingTests {
    @Test("the building-thread mark holds only inside run, is restored after a nested run, and never shows on another thread")
    func threadMark() {
        #expect(!BodyBuildingThread.isCurrent)
        var inside: [Bool] = []
        let onOtherThread = Locked<Bool?>(nil)
        BodyBuildingThread.run {
            inside.append(BodyBuildingThread.isCurrent)
            BodyBuildingThread.run { inside.append(BodyBuildingThread.isCurrent) }
            inside.append(BodyBuildingThread.isCurrent)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                onOtherThread.withLock { $0 = BodyBuildingThread.isCurrent }
                done.signal()
            }
            done.wait()
        }
        #expect(inside == [true, true, true])
        #expect(onOtherThread.current == false)
        #expect(!BodyBuildingThread.isCurrent)
    }

    @Test("a file the system holds in memory is read whole, at its offset, without waiting")
    func readsCachedRange() throws {
        guard let file = try ScratchBytes.readableWithoutWaiting(count: 50_000, seed: 3) else { return ScratchBytes.noteNoDirectory() }
        defer { file.remove() }
        let range = FileRange(path: file.path, offset: 1000, length: 40_000, expectedFileSize: 50_000)
        let opened = try OpenedFileRange(range)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 40_000, alignment: 16)
        defer { buffer.deallocate() }
        #expect(try opened.readRestWithoutWaiting(into: buffer.baseAddress!))
        #expect(Data(buffer) == file.bytes[1000..<41_000])
        #expect(opened.remaining == 0)
    }

    @Test("a file the system no longer holds in memory is not waited for: false, and read(into:) goes on from there")
    func evictedFileIsNotWaitedFor() throws {
        guard let file = try ScratchBytes.evicted(count: 300_000, seed: 4) else {
            // tmpfs and the like keep files only in memory: nothing there ever waits.
            let note = "neither the temporary nor the current directory drops files from memory: this test needs a disk file system"
            if RealServers.required { Issue.record("\(note)") } else { print("skipped: \(note)") }
            return
        }
        defer { file.remove() }
        // Room for the range and one byte more (the read asks past the recorded end).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 300_001, alignment: 16)
        defer { buffer.deallocate() }
        // A non-waiting read that misses starts the kernel's readahead; when the reading thread is
        // preempted before the kernel looks at the pages again (a busy machine), that readahead
        // from a fast disk can complete first and the read finds them: right, and no wait. So the
        // file is dropped and read again until a miss is seen (every attempt's bytes exact).
        var missed = false
        for _ in 0..<10 where !missed {
            if attempt(buffer) { missed = true }
            guard try file.evictFromMemory() else { break }
        }
        #expect(missed, "every non-waiting read of the dropped file found its pages")

        /// One read of the whole file: whether the non-waiting read missed; the bytes checked.
        func attempt(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
            do {
                let opened = try OpenedFileRange(FileRange(path: file.path, length: 300_000, expectedFileSize: 300_000))
                let complete = try opened.readRestWithoutWaiting(into: buffer.baseAddress!)
                var filled = Int(opened.range.length - opened.remaining)
                while opened.remaining > 0 {
                    filled += try opened.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<300_000]))
                }
                #expect(Data(buffer[0..<300_000]) == file.bytes)
                return !complete
            } catch {
                Issue.record("reading \(file.path): \(error)")
                return false
            }
        }
    }

    @Test("a file that changed size since the build fails the read, naming it, as a waiting read does")
    func changedFileFails() throws {
        guard let file = try ScratchBytes.readableWithoutWaiting(count: 10_000, seed: 5) else { return ScratchBytes.noteNoDirectory() }
        defer { file.remove() }
        let opened = try OpenedFileRange(FileRange(path: file.path, length: 10_000, expectedFileSize: 10_000))
        let handle = try #require(FileHandle(forWritingAtPath: file.path))
        try handle.truncate(atOffset: 6_000)
        try handle.close()
        // Room for the range and one byte more (the read asks past the recorded end).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 10_001, alignment: 16)
        defer { buffer.deallocate() }
        #expect(throws: FormDataError.fileChanged(path: file.path, expectedSize: 10_000, actualSize: 6_000)) {
            _ = try opened.readRestWithoutWaiting(into: buffer.baseAddress!)
        }
    }

    @Test(
        "a range that ends at the file's end: its read asks one byte past it; a file grown since (by one byte or many) fails naming its size",
        arguments: [1, 5_000])
    func grownFileFails(growth: Int) throws {
        guard let file = try ScratchBytes.readableWithoutWaiting(count: 10_000, seed: 8) else { return ScratchBytes.noteNoDirectory() }
        defer { file.remove() }
        let unchanged = try OpenedFileRange(FileRange(path: file.path, offset: 2_000, length: 8_000, expectedFileSize: 10_000))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 10_001, alignment: 16)
        defer { buffer.deallocate() }
        #expect(try unchanged.readRestWithoutWaiting(into: buffer.baseAddress!))
        #expect(Data(buffer[0..<8_000]) == file.bytes[2_000...])
        #expect(unchanged.remaining == 0)

        let opened = try OpenedFileRange(FileRange(path: file.path, offset: 2_000, length: 8_000, expectedFileSize: 10_000))
        let handle = try #require(FileHandle(forWritingAtPath: file.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 7, count: growth))
        try handle.close()
        #expect(throws: FormDataError.fileChanged(path: file.path, expectedSize: 10_000, actualSize: UInt64(10_000 + growth))) {
            _ = try opened.readRestWithoutWaiting(into: buffer.baseAddress!)
        }
    }

    @Test("the curl transport's whole-body read: exact bytes of a form with files in memory; nil when a file would wait or is gone")
    func wholeBody() throws {
        guard let cached = try ScratchBytes.readableWithoutWaiting(count: 3_000, seed: 6) else { return ScratchBytes.noteNoDirectory() }
        let evicted = try ScratchBytes(count: 200_000, seed: 7)
        defer {
            cached.remove()
            evicted.remove()
        }
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/")!)
        request.addPostValue("a value", forKey: "field")
        try request.addFile(cached.path, forKey: "first")
        try request.addFile(cached.path, forKey: "second")
        try request.buildPostBody()
        let source = try #require(request.bodySource)
        let bytes = try #require(CurlBodyBytes.readWithoutWaiting(source))
        #expect(Data(bytes: bytes.baseAddress, count: bytes.count) == (try source.readAll()))

        let waiting = FormDataRequest(url: URL(string: "http://127.0.0.1/")!)
        try waiting.addFile(evicted.path, forKey: "file")
        try waiting.buildPostBody()
        let waitingSource = try #require(waiting.bodySource)
        // As in evictedFileIsNotWaitedFor: a busy machine can let the readahead a miss starts
        // complete before the kernel looks again; a hit is then exact, and a miss must be seen.
        var missed = false
        for _ in 0..<10 where !missed {
            guard try evicted.evictFromMemory() else { break }
            if let found = CurlBodyBytes.readWithoutWaiting(waitingSource) {
                #expect(Data(bytes: found.baseAddress, count: found.count) == (try waitingSource.readAll()))
            } else {
                missed = true
            }
        }
        let cannotDrop = try !evicted.evictFromMemory()
        #expect(missed || cannotDrop, "every whole-body read of the dropped file found its pages")
        cached.remove()
        #expect(CurlBodyBytes.readWithoutWaiting(source) == nil)  // the pool's read reports the error
    }
}

/// A scratch file of seeded bytes in the temporary directory.
struct ScratchBytes {
    let path: String
    let bytes: Data

    /// A scratch file the system has dropped from memory: made in the temporary directory, or,
    /// where that keeps files only in memory (tmpfs), in the current directory (the package's,
    /// on a disk); nil when neither can drop it.
    /// A scratch file the system can read without waiting (`RWF_NOWAIT`; tmpfs says it cannot):
    /// made in the temporary directory, or else in the current directory; nil when neither can.
    static func readableWithoutWaiting(count: Int, seed: UInt64) throws -> ScratchBytes? {
        for directory in [NSTemporaryDirectory(), FileManager.default.currentDirectoryPath + "/"] {
            let file = try ScratchBytes(count: count, seed: seed, in: directory)
            let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
            var probe: UInt8 = 0
            let got = descriptor >= 0 ? cfilespace_read_cached(descriptor, &probe, 1, 0) : -1
            if descriptor >= 0 { close(descriptor) }
            if got == 1 { return file }
            file.remove()
        }
        return nil
    }

    /// Records (under `.ci/run`) or prints that no directory here reads without waiting.
    static func noteNoDirectory() {
        let note = "neither the temporary nor the current directory reads files without waiting: this test needs a disk file system"
        if RealServers.required { Issue.record("\(note)") } else { print("skipped: \(note)") }
    }

    static func evicted(count: Int, seed: UInt64) throws -> ScratchBytes? {
        for directory in [NSTemporaryDirectory(), FileManager.default.currentDirectoryPath + "/"] {
            let file = try ScratchBytes(count: count, seed: seed, in: directory)
            if try file.evictFromMemory() { return file }
            file.remove()
        }
        return nil
    }

    init(count: Int, seed: UInt64, in directory: String = NSTemporaryDirectory()) throws {
        var generator = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        bytes = Data(
            (0..<count).map { _ in
                generator ^= generator << 13
                generator ^= generator >> 7
                generator ^= generator << 17
                return UInt8(truncatingIfNeeded: generator)
            })
        path = directory + "fdk-nowait-\(UUID().uuidString).bin"
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Writes the file out and asks the system to drop it from memory; whether it did (a read
    /// that must not wait then says so: false on a file system that keeps files in memory).
    func evictFromMemory() throws -> Bool {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw FormDataError.fileUnreadable(path: path, errno: errno) }
        defer { close(descriptor) }
        guard fdatasync(descriptor) == 0, posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED)) == 0 else { return false }
        return try Self.noPageResident(descriptor: descriptor, count: bytes.count)
    }

    /// Whether none of the file's pages is in memory, asked with `mincore(2)` of a mapping, which
    /// reads nothing. (A probe by a non-waiting read is no good: a read that misses starts the
    /// kernel's readahead, and the next read — 100 µs later is enough — finds the file back in
    /// memory. That raced in the test that followed it.)
    private static func noPageResident(descriptor: Int32, count: Int) throws -> Bool {
        guard let mapping = mmap(nil, count, PROT_READ, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED else { return false }
        defer { munmap(mapping, count) }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var resident = [UInt8](repeating: 0, count: (count + pageSize - 1) / pageSize)
        guard mincore(mapping, count, &resident) == 0 else { return false }
        return resident.allSatisfy { $0 & 1 == 0 }
    }
}
