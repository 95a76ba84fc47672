@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
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
        // Each read's bytes are exact, hit or miss; a miss must be seen (ScratchBytes.expectMissSeen).
        try ScratchBytes.expectMissSeen(file, "a non-waiting read of the dropped file") {
            let opened = try OpenedFileRange(FileRange(path: file.path, length: 300_000, expectedFileSize: 300_000))
            let complete = try opened.readRestWithoutWaiting(into: buffer.baseAddress!)
            var filled = Int(opened.range.length - opened.remaining)
            while opened.remaining > 0 {
                filled += try opened.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<300_000]))
            }
            #expect(Data(buffer[0..<300_000]) == file.bytes)
            return !complete
        }
    }

    @Test("a file on a file system that cannot promise a read without waiting (tmpfs) is not read there: false, then read(into:)")
    func fileSystemWithoutNoWaitIsNotReadThere() throws {
        guard let file = try ScratchBytes.onFileSystemWithoutNoWait(count: 20_000, seed: 9) else { return }
        defer { file.remove() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 20_001, alignment: 16)
        defer { buffer.deallocate() }
        let opened = try OpenedFileRange(FileRange(path: file.path, length: 20_000, expectedFileSize: 20_000))
        #expect(try !opened.readRestWithoutWaiting(into: buffer.baseAddress!))
        #expect(opened.remaining == 20_000)
        var filled = 0
        while opened.remaining > 0 {
            filled += try opened.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<20_000]))
        }
        #expect(Data(buffer[0..<20_000]) == file.bytes)
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
        try ScratchBytes.expectMissSeen(evicted, "the whole-body read of a form with a dropped file") {
            guard let found = CurlBodyBytes.readWithoutWaiting(waitingSource) else { return true }
            let whole = try waitingSource.readAll()
            #expect(Data(bytes: found.baseAddress, count: found.count) == whole)
            return false
        }
        // A file system that cannot promise a read without waiting: never read there.
        if let inMemory = try ScratchBytes.onFileSystemWithoutNoWait(count: 2_000, seed: 10) {
            defer { inMemory.remove() }
            let tmpfs = FormDataRequest(url: URL(string: "http://127.0.0.1/")!)
            try tmpfs.addFile(inMemory.path, forKey: "file")
            try tmpfs.buildPostBody()
            #expect(CurlBodyBytes.readWithoutWaiting(try #require(tmpfs.bodySource)) == nil)
        }
        cached.remove()
        #expect(CurlBodyBytes.readWithoutWaiting(source) == nil)  // the pool's read reports the error
    }
}
