#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// Gzip request bodies (issue 3), each case in a measured child process:
///
/// - `gzip L6 mixed`: one thread at level 6 over a mixed text+binary file (1 MiB blocks, half
///   text, half random), FormDataKit (to a discarding sink, and through `BodyCompressor` into a
///   temporary file) against `gzip -6 -c > /dev/null` and Python zlib (`compressobj(6, DEFLATED,
///   31)`, 1 MiB reads, output discarded) on the same file.
/// - `gzip adaptive`: a random part typed `image/jpeg`, adaptive on (stored) against level 6.
/// - `gzip request 4×`: a FormDataRequest with `shouldCompressRequestBody` over a body four times
///   the size (1 GiB by default) — for its peak RSS.
enum GzipWorkload {
    static let pythonScript = """
        import sys, zlib
        c = zlib.compressobj(int(sys.argv[1]), zlib.DEFLATED, 31)
        n = 0
        with open(sys.argv[2], 'rb') as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                n += len(c.compress(b))
        n += len(c.flush())
        """

    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let size = totalMiB << 20
        let mixed = try generateMixed(in: directory, size: size)
        let random = try directory.generate("gzip-random.jpg", size: size, seed: 11, text: false)
        var rows: [ResultRow] = []

        let mixedName = "gzip L6 mixed \(totalMiB) MiB"
        var discard = ResultRow(workload: mixedName, tool: "FormDataKit deflater (discard)", bytes: size, seconds: [])
        var toFile = ResultRow(workload: mixedName, tool: "FormDataKit BodyCompressor → temp file", bytes: size, seconds: [])
        var gzip = ResultRow(workload: mixedName, tool: "gzip -6 -c > /dev/null", bytes: size, seconds: [])
        var python = ResultRow(workload: mixedName, tool: "python zlib compressobj(6, 31)", bytes: size, seconds: [])
        let hasPython = toolExists("python3")
        for _ in 0..<runs {
            measure(&discard, [selfPath, "--child", "gzip", "discard", "6", "0", "application/octet-stream", mixed])
            measure(&toFile, [selfPath, "--child", "gzip", "file", "6", "0", "application/octet-stream", mixed])
            measure(&gzip, ["sh", "-c", "gzip -6 -c \"$1\" > /dev/null", "sh", mixed])
            if hasPython { measure(&python, ["python3", "-c", pythonScript, "6", mixed]) }
        }
        rows += [discard, toFile, gzip] + (hasPython ? [python] : [])

        let adaptiveName = "gzip image/jpeg random \(totalMiB) MiB"
        var adaptive = ResultRow(workload: adaptiveName, tool: "FormDataKit adaptive (stored)", bytes: size, seconds: [])
        var level6 = ResultRow(workload: adaptiveName, tool: "FormDataKit adaptive off, level 6", bytes: size, seconds: [])
        for _ in 0..<runs {
            measure(&adaptive, [selfPath, "--child", "gzip", "file", "6", "1", "image/jpeg", random])
            measure(&level6, [selfPath, "--child", "gzip", "file", "6", "0", "image/jpeg", random])
        }
        rows += [adaptive, level6]

        // The RSS case: a 4× body (1 GiB by default) through FormDataRequest, compressed to disk.
        let bigMiB = totalMiB * 4
        let big = try generateMixed(in: directory, size: bigMiB << 20, name: "gzip-big.bin")
        var request = ResultRow(workload: "gzip request \(bigMiB) MiB mixed", tool: "FormDataKit FormDataRequest L6", bytes: bigMiB << 20, seconds: [])
        measure(&request, [selfPath, "--child", "gzip-request", big])
        request.note = "1 run; shouldCompressRequestBody, 10 fields + the file"
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

    /// `--child gzip MODE LEVEL ADAPTIVE TYPE FILE`: compresses FILE as one part typed TYPE.
    /// MODE `discard` streams to a sink that drops the bytes; `file` uses a temporary file.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 5, let level = Int32(arguments[1]) else { throw BenchError.usage("gzip child arguments") }
        let (mode, adaptive, type, file) = (arguments[0], arguments[2] == "1", arguments[3], arguments[4])
        let size = ((try FileManager.default.attributesOfItem(atPath: file))[.size] as? NSNumber)?.uint64Value ?? 0
        let source = BodySource(segments: [
            BodySegment(.file(FileRange(path: file, length: size, expectedFileSize: size)), partContentType: type)
        ])
        let settings = CompressionSettings(level: level, adaptive: adaptive)
        if mode == "discard" {
            var total: UInt64 = 0
            try BodyCompressor.compress(source, settings: settings) { (chunk) throws(FormDataError) in total += UInt64(chunk.count) }
            guard total > 0 else { throw BenchError.childFailed("no output") }
        } else {
            let compressed = try BodyCompressor.compress(source, settings: settings, to: .temporaryFile)
            guard case .file(let temp, let length) = compressed, temp.size == length else {
                throw BenchError.childFailed("compressed size mismatch")
            }
        }
    }

    /// `--child gzip-request FILE`: a compressed FormDataRequest body of ten fields and FILE.
    static func requestChild(file: String) throws {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/upload")!)
        request.shouldCompressRequestBody = true
        for index in 0..<10 { request.addPostValue("value \(index)", forKey: "field\(index)") }
        try request.addFile(file, withFileName: "data.bin", andContentType: "application/octet-stream", forKey: "file")
        try request.buildPostBody()
        guard let path = request.compressedPostBodyFilePath,
              let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? UInt64,
              size == request.postLength
        else { throw BenchError.childFailed("compressed size does not match postLength") }
    }
}
