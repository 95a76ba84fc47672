#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The three files of the W3/W4 body, mixed text and binary like a real upload (the same mix as
/// the reference measurements): `video.bin` (1/2 of the total, random bytes), `mixed.dat`
/// (3/8, alternating 1 MiB of text and 1 MiB of random bytes) and `notes.txt` (the rest, text).
/// Deterministic; written in 1 MiB blocks.
enum W3Files {
    static func generate(totalMiB: Int, in directory: WorkloadDirectory) throws -> [String] {
        let total = totalMiB << 20
        let videoSize = total / 2
        let mixedSize = total * 3 / 8
        let video = try directory.generate("w4-video.bin", size: videoSize, seed: 5, text: false)
        let mixed = try GzipWorkload.generateMixed(in: directory, size: mixedSize, name: "w4-mixed.dat")
        let notes = try directory.generate("w4-notes.txt", size: total - videoSize - mixedSize, seed: 6, text: true)
        return [video, mixed, notes]
    }
}
