@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import CZlib
import Foundation
import Testing
@testable import FormDataKit

/// The inflater and the legacy decompressor: independent input, corrupt and truncated input,
/// the output limit, and file errors.
@Suite("Compression: decompression and legacy file API")
struct CompressionDecompressorTests {
    @Test("gzip and zlib data made by Python inflate (header auto-detected)")
    func pythonMadeInput() async throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let body = TestBytes.text(400_000) + TestBytes.random(70_000)
        let gzip = try await CompressionOracles.pythonCompress(body, wbits: 31, scratch: scratch)
        let zlib = try await CompressionOracles.pythonCompress(body, wbits: 15, scratch: scratch)
        #expect(gzip.starts(with: [0x1F, 0x8B]))
        #expect(zlib.first == 0x78)
        #expect(try DataDecompressor.uncompressData(gzip) == body)
        #expect(try DataDecompressor.uncompressData(zlib) == body)
    }

    @Test("streaming in 1-byte pieces gives the same bytes")
    func oneBytePieces() throws {
        let body = TestBytes.text(20_000)
        let gz = try DataCompressor.compressData(body)
        let inflater = try GzipInflater(outputCapacity: 4096)
        var out = Data()
        for byte in gz {
            try inflater.decompress(Data([byte])) { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
        }
        try inflater.finish()
        #expect(out == body)
        #expect(inflater.bytesIn == UInt64(gz.count))
    }

    @Test("not compressed at all → typed error")
    func notCompressed() {
        #expect(throws: FormDataError.decompressionFailed(code: Z_DATA_ERROR, message: "incorrect header check")) {
            _ = try DataDecompressor.uncompressData(Data("hello, world".utf8))
        }
    }

    @Test("a flipped byte in the deflate data or the CRC → typed error", arguments: [12, 500, -8, -3])
    func corrupt(position: Int) throws {
        var gz = try DataCompressor.compressData(TestBytes.text(50_000))
        let index = position >= 0 ? position : gz.count + position
        gz[index] ^= 0x55
        do {
            _ = try DataDecompressor.uncompressData(gz)
            Issue.record("corrupt data was accepted")
        } catch let error as FormDataError {
            guard case .decompressionFailed(let code, let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code == Z_DATA_ERROR || code == Z_BUF_ERROR)
            #expect(!message.isEmpty)
        }
    }

    @Test("every truncation of a gzip stream → typed error")
    func truncated() throws {
        let gz = try DataCompressor.compressData(TestBytes.text(3000))
        for length in 1..<gz.count {
            #expect(throws: FormDataError.self) { _ = try DataDecompressor.uncompressData(gz.prefix(length)) }
        }
    }

    @Test("empty input inflates to nothing; trailing bytes after the stream are ignored")
    func emptyAndTrailing() throws {
        #expect(try DataDecompressor.uncompressData(Data()) == Data())
        let body = TestBytes.text(1000)
        let gz = try DataCompressor.compressData(body)
        #expect(try DataDecompressor.uncompressData(gz + Data("garbage".utf8)) == body)
    }

    @Test("output limit: the exact size passes, a smaller limit throws before the excess is delivered")
    func outputLimit() throws {
        let body = Data(count: 5_000_000)  // a little bomb: 5 MB of zeros
        let gz = try DataCompressor.compressData(body)
        #expect(gz.count < 10_000)

        let exact = try GzipInflater(outputLimit: UInt64(body.count))
        var count = 0
        try exact.decompress(gz) { (chunk) throws(FormDataError) in count += chunk.count }
        try exact.finish()
        #expect(count == body.count)

        let limited = try GzipInflater(outputLimit: 1_000_000)
        var delivered = 0
        #expect(throws: FormDataError.decompressedSizeLimitExceeded(limit: 1_000_000)) {
            try limited.decompress(gz) { (chunk) throws(FormDataError) in delivered += chunk.count }
        }
        #expect(delivered <= 1_000_000)
    }

    @Test("missing source → fileNotFound; nothing is created")
    func missingSource() throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let missing = scratch + "/nope.bin"
        #expect(throws: FormDataError.fileNotFound(path: missing)) {
            try DataCompressor.compressDataFromFile(missing, toFile: scratch + "/out.gz")
        }
        #expect(throws: FormDataError.fileNotFound(path: missing)) {
            try DataDecompressor.uncompressDataFromFile(missing, toFile: scratch + "/out.bin")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    @Test("unwritable destination → fileUnwritable; a directory → fileIsDirectory; no partial file")
    func destinationFailures() throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let source = scratch + "/in.bin"
        try TestBytes.text(10_000).write(to: URL(fileURLWithPath: source))
        let noDirectory = scratch + "/missing-dir/out.gz"
        #expect(throws: FormDataError.fileUnwritable(path: noDirectory, errno: ENOENT)) {
            try DataCompressor.compressDataFromFile(source, toFile: noDirectory)
        }
        let directory = scratch + "/a-directory"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        #expect(throws: FormDataError.fileIsDirectory(path: directory)) {
            try DataCompressor.compressDataFromFile(source, toFile: directory)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == ["a-directory", "in.bin"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("corrupt file → typed error, destination not created, an existing one untouched")
    func corruptFileLeavesNothing() throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        var gz = try DataCompressor.compressData(TestBytes.random(3 << 20))
        gz[gz.count / 2] ^= 0xFF
        let source = scratch + "/bad.gz"
        try gz.write(to: URL(fileURLWithPath: source))
        let destination = scratch + "/out.bin"
        #expect(throws: FormDataError.self) { try DataDecompressor.uncompressDataFromFile(source, toFile: destination) }
        #expect(!FileManager.default.fileExists(atPath: destination))

        let previous = Data("previous contents".utf8)
        try previous.write(to: URL(fileURLWithPath: destination))
        try gz.prefix(gz.count / 3).write(to: URL(fileURLWithPath: source))
        #expect(throws: FormDataError.self) { try DataDecompressor.uncompressDataFromFile(source, toFile: destination) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == previous)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == ["bad.gz", "out.bin"])
    }

    @Test("compressing a file onto itself replaces it with its gzip")
    func inPlace() async throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let path = scratch + "/same.bin"
        let body = TestBytes.text(600_000)
        try body.write(to: URL(fileURLWithPath: path))
        try DataCompressor.compressDataFromFile(path, toFile: path)
        #expect(try await CompressionOracles.verifiedInflation(of: path) == body)
    }
}
