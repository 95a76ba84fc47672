@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
@testable import FormDataKit

/// A scratch file of seeded bytes in the temporary directory.
struct ScratchBytes {
    let path: String
    let bytes: Data

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
