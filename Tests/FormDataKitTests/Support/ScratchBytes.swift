@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import CFileSpace
import Foundation
import Testing
@testable import FormDataKit

/// A scratch file of seeded bytes in the temporary directory.
struct ScratchBytes {
    let path: String
    let bytes: Data

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

    /// A scratch file the system has dropped from memory: made in the temporary directory, or,
    /// where that keeps files only in memory (tmpfs), in the current directory (the package's,
    /// on a disk); nil when neither can drop it.
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

    /// Drops the file from memory and runs `read` — one of the library's non-waiting reads,
    /// returning whether it missed — until it misses, at most `tries` times; between tries the
    /// file is dropped again and read once with `RWF_NOWAIT` here, not through the library.
    ///
    /// A read that misses starts the kernel's readahead, and where the disk answers before the
    /// kernel looks again (a block device that completes in its submit, such as zram; or the
    /// reader preempted meanwhile) the read finds the pages: right, and no wait. So a miss of
    /// the library's read is a pass; when it never misses, it is a failure only if the reads
    /// here missed at least a quarter of the times (this machine: about 19 in 20, idle or
    /// under two hogs), and otherwise a note: this system does not make dropped files wait.
    static func expectMissSeen(
        _ file: ScratchBytes, tries: Int = 20, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        read: () throws -> Bool
    ) throws {
        var independentMisses = 0
        for _ in 0..<tries {
            guard try file.evictFromMemory() else { return noteNotDropped(sourceLocation: sourceLocation) }
            if try read() { return }
            guard try file.evictFromMemory() else { return noteNotDropped(sourceLocation: sourceLocation) }
            if try file.independentReadMisses() { independentMisses += 1 }
        }
        if independentMisses * 4 >= tries {
            Issue.record(
                "\(what): the library never missed in \(tries) reads of the dropped file; RWF_NOWAIT read here missed \(independentMisses) times",
                sourceLocation: sourceLocation)
        } else {
            let seen = "\(independentMisses) misses of \(tries)"
            print("skipped: \(what): this system reads dropped files back before a non-waiting read looks (\(seen))")
        }
    }

    /// Records (under `.ci/run`) or prints that the system kept a file in memory it was asked to drop.
    static func noteNotDropped(sourceLocation: SourceLocation = #_sourceLocation) {
        let note = "the system kept the scratch file in memory after POSIX_FADV_DONTNEED: nothing here would wait"
        if RealServers.required { Issue.record("\(note)", sourceLocation: sourceLocation) } else { print("skipped: \(note)") }
    }

    /// Whether `preadv2(RWF_NOWAIT)` of the whole file, called here by symbol rather than through
    /// the library's read, says it would wait (`EAGAIN`) or reads less than the whole file.
    func independentReadMisses() throws -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FormDataError.fileUnreadable(path: path, errno: errno) }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: bytes.count)
        let got = buffer.withUnsafeMutableBytes { Self.readNoWait(descriptor, $0) }
        return got < 0 ? errno == EAGAIN : got < bytes.count
    }

    /// A scratch file in `/dev/shm` when that file system cannot promise a read without waiting:
    /// the independent `preadv2(RWF_NOWAIT)` answers `EOPNOTSUPP` there (tmpfs, on the kernels
    /// seen here); nil, printing why, where there is no such directory or it can.
    static func onFileSystemWithoutNoWait(count: Int, seed: UInt64) throws -> ScratchBytes? {
        guard FileManager.default.fileExists(atPath: "/dev/shm") else {
            print("skipped: no /dev/shm here")
            return nil
        }
        let file = try ScratchBytes(count: count, seed: seed, in: "/dev/shm/")
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        var byte: UInt8 = 0
        let refused = descriptor >= 0 && withUnsafeMutableBytes(of: &byte) { readNoWait(descriptor, $0) } < 0 && errno == EOPNOTSUPP
        if descriptor >= 0 { close(descriptor) }
        if refused { return file }
        file.remove()
        print("skipped: /dev/shm reads without waiting here (RWF_NOWAIT supported)")
        return nil
    }

    private typealias PReadV2 = @convention(c) (Int32, UnsafePointer<iovec>?, Int32, Int, Int32) -> Int

    /// `preadv2(descriptor, buffer, offset 0, RWF_NOWAIT)`, found by symbol (the Glibc module
    /// does not declare it); -1 with `ENOSYS` where the C library has none.
    private static func readNoWait(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "preadv2") else {
            errno = ENOSYS
            return -1
        }
        let preadv2 = unsafeBitCast(symbol, to: PReadV2.self)
        var piece = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        return preadv2(descriptor, &piece, 1, 0, 0x8 /* RWF_NOWAIT */)
    }
}
