#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// W6 and the memory check of gzip request bodies, each case in a measured child process:
///
/// - `W6 gzip image/jpeg random`: one random part typed `image/jpeg` (256 MiB by default),
///   adaptive on (the part is stored at level 0) against adaptive off (deflated at level 6), on
///   the automatic thread count and on one thread. Target: adaptive ≥ 10× level 6.
/// - `gzip request 4×`: a FormDataRequest with `shouldCompressRequestBody` over a mixed body four
///   times the size (1 GiB by default), automatic threads — for its peak RSS, which must not grow
///   with the body.
///
/// The level-6/level-1 comparison with gzip, Python zlib and pigz is W4 (``W4Workload``).
enum GzipWorkload {
    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let size = totalMiB << 20
        let random = try directory.generate("gzip-random.jpg", size: size, seed: 11, text: false)
        var rows: [ResultRow] = []

        let adaptiveName = "W6 gzip image/jpeg random \(totalMiB) MiB"
        var cases: [(row: ResultRow, command: [String])] = []
        for (label, adaptive, threads) in [
            ("adaptive (stored), automatic threads", "1", "0"),
            ("adaptive off, level 6, automatic threads", "0", "0"),
            ("adaptive (stored), 1 thread", "1", "1"),
            ("adaptive off, level 6, 1 thread", "0", "1"),
        ] {
            cases.append(
                (
                    ResultRow(workload: adaptiveName, tool: "FormDataKit \(label)", bytes: size, seconds: []),
                    [childPath, "gzip", "file", "6", adaptive, "image/jpeg", threads, random]
                ))
        }
        var cpu = [[Double]](repeating: [], count: cases.count)
        for _ in 0..<runs {
            for index in cases.indices { W4Workload.measure(&cases[index].row, cpu: &cpu[index], cases[index].command) }
        }
        rows += cases.map(\.row)

        // The RSS case: a 4× body (1 GiB by default) through FormDataRequest, compressed to disk.
        let bigMiB = totalMiB * 4
        let big = try generateMixed(in: directory, size: bigMiB << 20, name: "gzip-big.bin")
        var request = ResultRow(
            workload: "gzip request \(bigMiB) MiB mixed", tool: "FormDataKit FormDataRequest L6", bytes: bigMiB << 20, seconds: [])
        measure(&request, [childPath, "gzip-request", big])
        request.note = "1 run; shouldCompressRequestBody, 10 fields + the file, automatic threads"
        rows.append(request)
        try? FileManager.default.removeItem(atPath: big)
        return rows
    }

    private static func measure(_ row: inout ResultRow, _ arguments: [String]) {
        let result = runMeasured(arguments)
        guard result.status == 0 else {
            row.note = "FAILED (exit \(result.status))"
            return
        }
        row.seconds.append(result.seconds)
        row.peakRSSKiB = max(row.peakRSSKiB ?? 0, result.peakRSSKiB)
    }

    /// A file of `size` bytes alternating 1 MiB of text and 1 MiB of random bytes.
    static func generateMixed(in directory: WorkloadDirectory, size: Int, name: String = "gzip-mixed.bin") throws -> String {
        let text = try directory.generate("mixed-text-block", size: 1 << 20, seed: 21, text: true)
        let path = "\(directory.path)/\(name)"
        guard let out = fopen(path, "wb") else { throw CocoaError(.fileWriteUnknown) }
        defer { fclose(out) }
        let textBlock = try Data(contentsOf: URL(fileURLWithPath: text))
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var randomBlock = [UInt8](repeating: 0, count: 1 << 20)
        var left = size
        var index = 0
        while left > 0 {
            let n = min(left, 1 << 20)
            if index % 2 == 0 {
                textBlock.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, n, out) }
            } else {
                for i in 0..<n {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    randomBlock[i] = UInt8(truncatingIfNeeded: state)
                }
                fwrite(randomBlock, 1, n, out)
            }
            left -= n
            index += 1
        }
        return path
    }
}
