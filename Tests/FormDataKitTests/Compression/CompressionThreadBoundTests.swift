@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// `compressionThreads` is a request, not a command: the parallel compressor clamps it to the
/// active processors and to the body's blocks, in one place (issue 53: 20,000 started 20,003
/// threads for a 5 MB body).
@Suite("Compression: the worker count is clamped to the cores and the blocks")
struct CompressionThreadBoundTests {
    static let fiveMB = 5_000_000

    /// The threads of this process now (`/proc/self/task`); nil where there is no `/proc`.
    static func threadCount() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
    }

    @Test("the clamp: at most the processors and the blocks, at least one")
    func workerCount() {
        let block = ParallelGzipCompressor.defaultBlockSize
        let count = ParallelGzipCompressor.workerCount
        #expect(count(20_000, UInt64(Self.fiveMB), block, 2) == 2)
        #expect(count(20_000, UInt64(Self.fiveMB), block, 64) == 20)  // 5,000,000 bytes: 20 blocks of 256 KiB
        #expect(count(3, UInt64(Self.fiveMB), block, 64) == 3)
        #expect(count(8, 300 << 10, block, 16) == 2)  // 300 KiB: two blocks
        #expect(count(8, UInt64(block), block, 16) == 1)
        #expect(count(8, 0, block, 16) == 1)
        #expect(count(0, 10 << 20, block, 16) == 1)
        #expect(count(4, 10 << 20, block, 0) == 1)
    }

    @Test("20,000 threads asked for a 5 MB body: the process gains at most one thread per core; the gzip inflates to the body")
    func twentyThousandThreads() throws {
        guard let before = Self.threadCount() else { return }  // no /proc: nothing to count
        let body = TestBytes.text(Self.fiveMB / 2) + TestBytes.random(Self.fiveMB - Self.fiveMB / 2, seed: 53)
        let source = BodySource(segments: [BodySegment(.bytes(body), partContentType: nil)])
        let compressor = ParallelGzipCompressor(threads: 20_000)
        var out = Data()
        var peak = 0
        // The sink runs on the calling thread while every worker is alive (they start before
        // the header is written and stop after the trailer), so each call sees them all.
        _ = try compressor.compress(source, settings: CompressionSettings(threads: 20_000)) { (chunk) throws(FormDataError) in
            peak = max(peak, Self.threadCount() ?? 0)
            out.append(contentsOf: chunk)
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(compressor.threads == min(cores, 20))
        // Other suites running in this process at the same time start threads of their own:
        // 64 of slack for them, against the 20,000 the old code started.
        #expect(peak - before <= cores + 64, "peak \(peak) threads, \(before) before")
        #expect(try DataDecompressor.uncompressData(out) == body)
        CompressionParallelTests.checkFraming(out, body: body)
    }

    @Test("through a request: compressionThreads = 20,000 on a 5 MB body builds a gzip body that inflates to the form")
    func throughARequest() throws {
        let request = FormDataRequest(url: URL(string: "http://example.com/form")!)
        request.shouldCompressRequestBody = true
        request.compressionThreads = 20_000
        request.setPostValue(String(decoding: TestBytes.text(Self.fiveMB), as: UTF8.self), forKey: "text")
        try request.buildPostBody()
        let plain = try #require(request.postBody)
        let compressed: Data
        if let inMemory = request.compressedPostBody {
            compressed = inMemory
        } else {
            let path = try #require(request.compressedPostBodyFilePath)
            compressed = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        #expect(try DataDecompressor.uncompressData(compressed) == plain)
        #expect(request.postLength == UInt64(compressed.count))
    }
}
