@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import CZlib
import Foundation
import Testing
@testable import FormDataKit

/// Parallel (pigz-style) gzip: independent blocks primed with the previous 32 KiB, joined into
/// one gzip member. Every output is checked by FormDataKit's inflater and by two independent
/// ones (system gzip, Python zlib, which also insists on exactly one member and no trailing data).
@Suite("Compression: parallel gzip")
struct CompressionParallelTests {
    /// Half text, half random, so blocks both find matches and store.
    static func mixed(_ count: Int, seed: UInt64) -> Data {
        let half = count / 2
        return TestBytes.text(half) + TestBytes.random(count - half, seed: seed)
    }

    static func source(_ data: Data, type: String? = nil) -> BodySource {
        BodySource(segments: data.isEmpty ? [] : [BodySegment(.bytes(data), partContentType: type)])
    }

    /// Compresses `source` in parallel into memory and returns the gzip bytes and the summary.
    static func parallel(
        _ source: BodySource, level: Int32 = 6, adaptive: Bool = true, threads: Int = 2, blockSize: Int
    ) throws -> (Data, CompressionSummary) {
        var out = Data()
        let settings = CompressionSettings(level: level, adaptive: adaptive, threads: threads, blockSize: blockSize)
        let summary = try BodyCompressor.compress(source, settings: settings) { (chunk) throws(FormDataError) in
            out.append(contentsOf: chunk)
        }
        return (out, summary)
    }

    /// The 10-byte header and the trailer's CRC-32 and length, checked against `body`.
    static func checkFraming(_ gz: Data, body: Data, level: Int32 = 6) {
        let bytes = [UInt8](gz)
        #expect(bytes.count >= 18)
        guard bytes.count >= 18 else { return }
        #expect(Array(bytes[0..<8]) == [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0])
        #expect(bytes[8] == (level == 9 ? 2 : level < 2 && level >= 0 ? 4 : 0))
        #expect(bytes[9] == 3)
        let trailer = bytes.suffix(8).map(UInt32.init)
        let crc = trailer[0] | trailer[1] << 8 | trailer[2] << 16 | trailer[3] << 24
        let size = trailer[4] | trailer[5] << 8 | trailer[6] << 16 | trailer[7] << 24
        let expected = body.withUnsafeBytes { raw in
            UInt32(crc32(0, raw.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(raw.count)))
        }
        #expect(crc == expected)
        #expect(size == UInt32(truncatingIfNeeded: body.count))
    }

    /// Block sizes: one larger than the 32 KiB dictionary, and one far smaller (the dictionary
    /// then spans many earlier blocks).
    static let blockSizes = [65_536, 1_000]

    static func sizes(for block: Int) -> [Int] {
        [0, 1, block - 1, block, block + 1, 2 * block, 5 * block + 777]
    }

    @Test("sizes around block edges inflate byte-identical (ours, gzip -dc, Python zlib)", arguments: blockSizes)
    func blockEdges(blockSize: Int) async throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        for (index, size) in Self.sizes(for: blockSize).enumerated() {
            let body = Self.mixed(size, seed: UInt64(index + 1))
            let (gz, summary) = try Self.parallel(Self.source(body), blockSize: blockSize)
            #expect(summary.bytesIn == UInt64(size))
            #expect(summary.bytesOut == UInt64(gz.count))
            #expect(try DataDecompressor.uncompressData(gz) == body, "size \(size)")
            #expect(try await CompressionOracles.verifiedInflation(of: gz, scratch: scratch) == body, "size \(size)")
            Self.checkFraming(gz, body: body)
        }
    }

    @Test("empty body: the same 20 bytes a one-thread stream gives")
    func emptyBody() throws {
        let (gz, _) = try Self.parallel(.empty, blockSize: 4096)
        #expect(gz.count == 20)
        #expect(try DataDecompressor.uncompressData(gz) == Data())
    }

    @Test(
        "every level and thread count round-trips; the header's extra flags follow the level",
        arguments: [Int32(-1), 0, 1, 5, 9])
    func levels(level: Int32) async throws {
        let body = Self.mixed(300_001, seed: 9)
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        for threads in [2, 3] {
            let (gz, _) = try Self.parallel(Self.source(body), level: level, threads: threads, blockSize: 50_000)
            #expect(try await CompressionOracles.verifiedInflation(of: gz, scratch: scratch) == body)
            Self.checkFraming(gz, body: body, level: ZlibSupport.effectiveLevel(level))
        }
    }

    @Test("text compresses about as well as one thread (the dictionary keeps matches across blocks)")
    func ratioCloseToSingleThread() throws {
        let body = TestBytes.text(3 << 20)
        let (parallel, _) = try Self.parallel(Self.source(body), blockSize: 128 << 10)
        let single = try DataCompressor.compressData(body)
        #expect(try DataDecompressor.uncompressData(parallel) == body)
        // Unprimed blocks would lose far more; a few bytes per block is the expected cost.
        #expect(Double(parallel.count) <= Double(single.count) * 1.01 + 24 * 64, "parallel \(parallel.count) vs \(single.count)")
    }

    @Test("adaptive parts: a block never mixes levels; the stream inflates exactly and is no larger")
    func adaptiveMixed() async throws {
        let jpeg = TestBytes.random(700_003, seed: 31)
        let text = TestBytes.text(250_001)
        let request = CompressionAdaptiveTests.makeRequest(jpeg: jpeg, text: text)
        try request.buildPostBody()
        let source = try #require(request.bodySource)
        let body = try source.readAll()
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }

        let (adaptive, summary) = try Self.parallel(source, adaptive: true, blockSize: 65_536)
        #expect(summary.levelChanges == 2)  // text → jpeg (0) → text (6)
        #expect(try await CompressionOracles.verifiedInflation(of: adaptive, scratch: scratch) == body)
        Self.checkFraming(adaptive, body: body)

        let (plain, plainSummary) = try Self.parallel(source, adaptive: false, blockSize: 65_536)
        #expect(plainSummary.levelChanges == 0)
        #expect(try DataDecompressor.uncompressData(plain) == body)
        #expect(adaptive.count <= plain.count, "adaptive \(adaptive.count) vs level 6 \(plain.count)")
    }

    @Test("a body streamed from files: 20 MiB random plus text through FormDataRequest, 2 threads and automatic")
    func requestWithFiles() async throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let randomPath = scratch + "/random.bin"
        let textPath = scratch + "/notes.txt"
        try TestBytes.random(20 << 20, seed: 41).write(to: URL(fileURLWithPath: randomPath))
        try TestBytes.text((3 << 20) + 12_345).write(to: URL(fileURLWithPath: textPath))
        var outputs: [Data] = []
        for threads in [2, 0, 1] {
            let request = FormDataRequest(url: URL(string: "http://example.com/upload")!)
            request.multipartBoundary = fixedBoundary
            request.shouldCompressRequestBody = true
            request.compressionLevel = 1
            request.compressionThreads = threads
            #expect(request.compressionThreads == threads)
            for index in 0..<10 { request.setPostValue("value \(index) ünï", forKey: "field\(index)") }
            try request.addFile(randomPath, withFileName: "random.bin", andContentType: "application/octet-stream", forKey: "random")
            try request.addFile(textPath, withFileName: "notes.txt", andContentType: "text/plain", forKey: "notes")
            try request.buildPostBody()
            let body = try #require(request.bodySource).readAll()
            let path = try #require(request.compressedPostBodyFilePath)
            let gz = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(UInt64(gz.count) == request.postLength)
            #expect(try await CompressionOracles.verifiedInflation(of: path) == body)
            Self.checkFraming(gz, body: body, level: 1)
            outputs.append(gz)
        }
        // Two threads and one thread make different (both valid) streams; automatic is one of them.
        #expect(outputs[0] != outputs[2])
        let automatic = BodyCompressor.threadCount(for: 0, length: 23 << 20)
        #expect(outputs[1] == (automatic > 1 ? outputs[0] : outputs[2]))
    }

    @Test("thread count: explicit counts are kept, automatic is one thread below 4 MiB")
    func threadCountRule() throws {
        #expect(BodyCompressor.threadCount(for: 1, length: 1 << 30) == 1)
        #expect(BodyCompressor.threadCount(for: 3, length: 10) == 3)
        #expect(BodyCompressor.threadCount(for: 0, length: BodyCompressor.parallelMinimumLength - 1) == 1)
        let processors = ProcessInfo.processInfo.activeProcessorCount
        let expected = processors < 2 ? 1 : min(processors, BodyCompressor.maximumAutomaticThreads)
        #expect(BodyCompressor.threadCount(for: 0, length: BodyCompressor.parallelMinimumLength) == expected)
        #expect(FormDataRequest(url: anyURL).compressionThreads == 0)
    }

    @Test("automatic threads count only the bytes that are deflated: stored parts stay on one thread")
    func automaticThreadsFollowDeflatedBytes() throws {
        let big: UInt64 = 64 << 20
        func source(_ type: String) -> BodySource {
            BodySource(segments: [
                BodySegment(.bytes(Data(repeating: 0x2D, count: 300))),
                BodySegment(.file(FileRange(path: "/nonexistent", length: big, expectedFileSize: big)), partContentType: type),
                BodySegment(.bytes(Data(repeating: 0x2D, count: 60))),
            ])
        }
        let adaptive = CompressionSettings(level: 6, adaptive: true)
        #expect(BodyCompressor.deflatedLength(of: source("image/jpeg"), settings: adaptive) == 360)
        #expect(BodyCompressor.deflatedLength(of: source("text/plain"), settings: adaptive) == big + 360)
        #expect(
            BodyCompressor.deflatedLength(of: source("image/jpeg"), settings: CompressionSettings(level: 6, adaptive: false)) == big + 360)
        #expect(BodyCompressor.deflatedLength(of: source("text/plain"), settings: CompressionSettings(level: 0, adaptive: true)) == 0)

        // End to end: an all-JPEG body compressed with automatic threads is byte-identical to the
        // one-thread stream (the parallel compressor would frame it differently).
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("photo.jpg", TestBytes.random(6 << 20, seed: 99))
        var outputs: [Data] = []
        for threads in [0, 1] {
            let request = FormDataRequest(url: anyURL)
            request.shouldCompressRequestBody = true
            request.compressionThreads = threads
            request.multipartBoundary = fixedBoundary
            try request.addFile(path, withFileName: "photo.jpg", andContentType: "image/jpeg", forKey: "photo")
            try request.buildPostBody()
            let gz = try Data(contentsOf: URL(fileURLWithPath: try #require(request.compressedPostBodyFilePath)))
            #expect(try DataDecompressor.uncompressData(gz) == (try #require(request.bodySource).readAll()))
            outputs.append(gz)
        }
        #expect(outputs[0] == outputs[1])
    }

    @Test("a negative thread count fails the build with a typed error")
    func negativeThreads() throws {
        let request = FormDataRequest(url: anyURL)
        request.shouldCompressRequestBody = true
        request.compressionThreads = -1
        request.setPostValue("v", forKey: "k")
        #expect(throws: FormDataError.self) { try request.buildPostBody() }
        do {
            try request.buildPostBody()
        } catch let error as FormDataError {
            guard case .compressionFailed(let code, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(code == Z_STREAM_ERROR)
        }
    }

    @Test("a failing sink stops the workers and its error comes back")
    func sinkFailure() throws {
        let body = Self.mixed(2 << 20, seed: 51)
        var calls = 0
        let failure = FormDataError.fileUnwritable(path: "/nowhere", errno: ENOSPC)
        #expect(throws: failure) {
            try BodyCompressor.compress(
                Self.source(body), settings: CompressionSettings(threads: 2, blockSize: 65_536)
            ) { (_) throws(FormDataError) in
                calls += 1
                if calls == 4 { throw failure }
            }
        }
        #expect(calls == 4)
    }

    @Test("a file that changes size mid-compression fails; the partial temp file is removed")
    func changedFileLeavesNothing() throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let path = scratch + "/grows.bin"
        try TestBytes.random(3 << 20, seed: 52).write(to: URL(fileURLWithPath: path))
        let source = BodySource(segments: [
            BodySegment(.bytes(TestBytes.text(2 << 20))),
            BodySegment(.file(FileRange(path: path, length: 2 << 20, expectedFileSize: 2 << 20))),
        ])
        let purpose = "gzip-parallel-test-\(UUID().uuidString)"
        #expect(throws: FormDataError.fileChanged(path: path, expectedSize: 2 << 20, actualSize: 3 << 20)) {
            _ = try BodyCompressor.compress(
                source, settings: CompressionSettings(threads: 2, blockSize: 65_536), to: .temporaryFile, purpose: purpose)
        }
        _ = try TemporaryStorage.directory()
        #expect(TemporaryStorage.currentFiles().filter { $0.contains(purpose) }.isEmpty)
    }

    @Test("to a temporary file: the same stream as into memory, and its length is exact")
    func temporaryFileMatchesMemory() throws {
        let body = Self.mixed(1_500_000, seed: 61)
        let settings = CompressionSettings(threads: 2, blockSize: 100_000)
        let inMemory = try BodyCompressor.compress(Self.source(body), settings: settings, to: .memory)
        let onDisk = try BodyCompressor.compress(Self.source(body), settings: settings, to: .temporaryFile)
        guard case .memory(let data) = inMemory, case .file(let file, let length) = onDisk else {
            Issue.record("wrong destinations")
            return
        }
        #expect(length == UInt64(data.count))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == data)
        #expect(try DataDecompressor.uncompressData(data) == body)
    }
}
