import Foundation
import FormDataKitTestSupport

/// Independent gzip implementations to check FormDataKit's output against: the system `gzip`
/// (its own deflate code) and Python's `zlib` module, run as child processes on files.
enum CompressionOracles {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A new empty scratch directory; remove it with ``removeScratch(_:)``.
    static func makeScratch() throws -> String {
        let path = NSTemporaryDirectory() + "fdk-gz-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func removeScratch(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `/bin/sh -c script` with the arguments as `$1`…; returns the exit status and stderr.
    /// The child is waited for on GCD threads (``ChildProcess``), never on the Swift concurrency
    /// pool: gzip and Python take up to seconds on the larger inputs.
    @discardableResult
    static func shell(_ script: String, _ arguments: [String] = []) async throws -> (status: Int32, stderr: String) {
        let result = try await ChildProcess.run("/bin/sh", ["-c", script, "sh"] + arguments)
        return (result.signalled ? 128 + result.status : result.status, String(decoding: result.stderr, as: UTF8.self))
    }

    /// Whether `gzip -t` accepts the file at `path`.
    static func gzipAccepts(_ path: String) async throws -> Bool {
        try await shell("gzip -t < \"$1\"", [path]).status == 0
    }

    /// The file at `path` decompressed by `gzip -dc`.
    static func gzipDecompress(_ path: String) async throws -> Data {
        let out = path + ".gzip-out"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try await shell("gzip -dc < \"$1\" > \"$2\"", [path, out])
        guard result.status == 0 else { throw Failure(description: "gzip -dc failed: \(result.stderr)") }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// The file at `path` decompressed by Python's zlib, requiring a gzip wrapper (wbits 31)
    /// and a complete stream with nothing after it.
    static func pythonDecompress(_ path: String) async throws -> Data {
        let out = path + ".python-out"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let script = """
            import sys, zlib
            d = zlib.decompressobj(31)
            with open(sys.argv[1], 'rb') as src, open(sys.argv[2], 'wb') as dst:
                while True:
                    block = src.read(1 << 20)
                    if not block:
                        break
                    dst.write(d.decompress(block))
                dst.write(d.flush())
            if not d.eof or d.unused_data:
                sys.exit('incomplete or trailing data')
            """
        let result = try await shell("python3 -c \"$1\" \"$2\" \"$3\"", [script, path, out])
        guard result.status == 0 else { throw Failure(description: "python zlib failed: \(result.stderr)") }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// `data` compressed by Python's zlib with window bits `wbits` (31: gzip, 15: zlib).
    static func pythonCompress(_ data: Data, wbits: Int, scratch: String) async throws -> Data {
        let input = scratch + "/py-in-\(UUID().uuidString)"
        let out = input + ".z"
        defer {
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: out)
        }
        try data.write(to: URL(fileURLWithPath: input))
        let script = """
            import sys, zlib
            c = zlib.compressobj(6, zlib.DEFLATED, int(sys.argv[3]))
            with open(sys.argv[1], 'rb') as src, open(sys.argv[2], 'wb') as dst:
                dst.write(c.compress(src.read()))
                dst.write(c.flush())
            """
        let result = try await shell("python3 -c \"$1\" \"$2\" \"$3\" \"$4\"", [script, input, out, String(wbits)])
        guard result.status == 0 else { throw Failure(description: "python compress failed: \(result.stderr)") }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// Checks the gzip file at `path` with both oracles; returns what both inflated it to.
    static func verifiedInflation(of path: String) async throws -> Data {
        guard try await gzipAccepts(path) else { throw Failure(description: "gzip -t rejected \(path)") }
        let byGzip = try await gzipDecompress(path)
        let byPython = try await pythonDecompress(path)
        guard byGzip == byPython else { throw Failure(description: "gzip and python disagree on \(path)") }
        return byGzip
    }

    /// Writes `data` to a new file in `scratch` and verifies it like ``verifiedInflation(of:)``.
    static func verifiedInflation(of data: Data, scratch: String) async throws -> Data {
        let path = scratch + "/check-\(UUID().uuidString).gz"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try data.write(to: URL(fileURLWithPath: path))
        return try await verifiedInflation(of: path)
    }
}

/// Deterministic test bytes.
enum TestBytes {
    /// `count` pseudo-random bytes from `seed` (SplitMix64): incompressible.
    static func random(_ count: Int, seed: UInt64 = 0x5EED) -> Data {
        guard count > 0 else { return Data() }
        var data = Data(count: count)
        var state = seed
        data.withUnsafeMutableBytes { raw in
            let words = count / 8
            let wordPointer = raw.baseAddress!.assumingMemoryBound(to: UInt64.self)
            for index in 0..<words {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                wordPointer[index] = z ^ (z >> 31)
            }
            for index in (words * 8)..<count {
                raw[index] = UInt8(truncatingIfNeeded: index &* 131 &+ 7)
            }
        }
        return data
    }

    /// About `count` bytes of compressible English-like text (exactly `count` bytes).
    static func text(_ count: Int) -> Data {
        let words = [
            "form", "data", "upload", "boundary", "gzip", "stream", "request", "body", "part",
            "field", "value", "swift", "linux", "deflate", "window", "level",
        ]
        var out = Data()
        out.reserveCapacity(count + 16)
        var index = 0
        while out.count < count {
            out.append(contentsOf: words[(index &* 7 &+ index / 5) % words.count].utf8)
            out.append(index % 13 == 12 ? 0x0A : 0x20)
            if index % 29 == 0 { out.append(contentsOf: String(index).utf8) }
            index += 1
        }
        return out.prefix(count)
    }
}
