#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The three files of the W3/W4 body, mixed text and binary like a real upload (the same mix as
/// the reference measurements): `video.bin` (1/2 of the total, random bytes), `mixed.dat`
/// (3/8, alternating 1 MiB of text and 1 MiB of random bytes) and `notes.txt` (the rest, text).
/// Deterministic; written in 1 MiB blocks, and reused when already there at the right size
/// (W4 and the multipart-kit pair share them).
enum W3Files {
    static func generate(totalMiB: Int, in directory: WorkloadDirectory) throws -> [String] {
        let total = totalMiB << 20
        let videoSize = total / 2
        let mixedSize = total * 3 / 8
        let prefix = "w3files-\(totalMiB)"
        func reuse(_ name: String, _ size: Int, _ make: () throws -> String) rethrows -> String {
            let path = "\(directory.path)/\(name)"
            let existing = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
            return existing == size ? path : try make()
        }
        let video = try reuse("\(prefix)-video.bin", videoSize) {
            try directory.generate("\(prefix)-video.bin", size: videoSize, seed: 5, text: false)
        }
        let mixed = try reuse("\(prefix)-mixed.dat", mixedSize) {
            try GzipWorkload.generateMixed(in: directory, size: mixedSize, name: "\(prefix)-mixed.dat")
        }
        let notesSize = total - videoSize - mixedSize
        let notes = try reuse("\(prefix)-notes.txt", notesSize) {
            try directory.generate("\(prefix)-notes.txt", size: notesSize, seed: 6, text: true)
        }
        return [video, mixed, notes]
    }
}
