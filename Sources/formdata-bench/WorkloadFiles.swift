#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A temporary directory of generated inputs, removed when the benchmark ends.
final class WorkloadDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "formdata-bench-" + String(getpid())
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `size` deterministic bytes to `name`: random bytes (`text == false`) or
    /// line-structured ASCII text. Generated in 1 MiB blocks (bounded memory).
    func generate(_ name: String, size: Int, seed: UInt64, text: Bool) throws -> String {
        let file = "\(path)/\(name)"
        guard let out = fopen(file, "wb") else { throw CocoaError(.fileWriteUnknown) }
        defer { fclose(out) }
        var state = seed | 1
        let words = Array("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor 2026-11-22 INFO upload ok\n".utf8)
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var left = size
        while left > 0 {
            let n = min(left, block.count)
            for i in 0..<n {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                block[i] = text ? words[Int(state % UInt64(words.count))] : UInt8(truncatingIfNeeded: state)
            }
            fwrite(block, 1, n, out)
            left -= n
        }
        return file
    }
}

/// The Go peer `Benchmarks/peers/NAME/main.go`, built into `directory` once per run of the
/// harness; nil without Debian's `golang-go` (or when it does not build).
func goPeer(_ name: String, in directory: WorkloadDirectory) -> String? {
    guard toolExists("go") else { return nil }
    let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Benchmarks/peers/\(name)/main.go").path
    let binary = "\(directory.path)/\(name)"
    if FileManager.default.isExecutableFile(atPath: binary) { return binary }
    let built = runMeasured(["go", "build", "-o", binary, source], stdoutPath: "\(directory.path)/go-build-stdout")
    return built.status == 0 ? binary : nil
}
