@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// Round trips through FormDataKit's gzip, checked by FormDataKit's own inflater and by two
/// independent implementations (system gzip, Python zlib).
@Suite("Compression: round trips")
struct CompressionRoundTripTests {
    static let chunk = 262_144

    static let cases: [(String, Data)] = [
        ("empty", Data()),
        ("one byte", Data([0x41])),
        ("256 KiB random", TestBytes.random(chunk, seed: 1)),
        ("3 x 256 KiB random", TestBytes.random(3 * chunk, seed: 2)),
        ("256 KiB + 1 text", TestBytes.text(chunk + 1)),
        ("text 1 MiB", TestBytes.text(1 << 20)),
    ]

    @Test("compressData: complete gzip for every size", arguments: 0..<cases.count)
    func compressDataRoundTrip(index: Int) async throws {
        let (_, body) = Self.cases[index]
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let gz = try DataCompressor.compressData(body)
        #expect(gz.starts(with: [0x1F, 0x8B, 0x08]))
        #expect(try DataDecompressor.uncompressData(gz) == body)
        #expect(try await CompressionOracles.verifiedInflation(of: gz, scratch: scratch) == body)
    }

    @Test("compressDataFromFile: complete gzip for every size", arguments: 0..<cases.count)
    func compressFileRoundTrip(index: Int) async throws {
        let (_, body) = Self.cases[index]
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let source = scratch + "/in.bin"
        let destination = scratch + "/out.gz"
        let back = scratch + "/back.bin"
        try body.write(to: URL(fileURLWithPath: source))
        try DataCompressor.compressDataFromFile(source, toFile: destination)
        #expect(try await CompressionOracles.verifiedInflation(of: destination) == body)
        try DataDecompressor.uncompressDataFromFile(destination, toFile: back)
        #expect(try Data(contentsOf: URL(fileURLWithPath: back)) == body)
        // Only the three files: no hidden partial files left next to the destination.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == ["back.bin", "in.bin", "out.gz"])
    }

    @Test("empty input gives the 20-byte gzip of nothing")
    func emptyIsTwentyBytes() throws {
        let gz = try DataCompressor.compressData(Data())
        #expect(gz.count == 20)
        #expect(try DataDecompressor.uncompressData(gz) == Data())
    }

    @Test("body compressor: memory and temporary file give the same stream")
    func bodyCompressorDestinations() async throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let filePart = scratch + "/part.bin"
        let fileBytes = TestBytes.random(4 * Self.chunk + 17, seed: 3)
        try fileBytes.write(to: URL(fileURLWithPath: filePart))
        let head = TestBytes.text(5000)
        let tail = Data("\r\n--end--\r\n".utf8)
        let source = BodySource(segments: [
            BodySegment(.bytes(head)),
            BodySegment(
                .file(FileRange(path: filePart, length: UInt64(fileBytes.count), expectedFileSize: UInt64(fileBytes.count))),
                partContentType: "application/octet-stream"),
            BodySegment(.bytes(tail)),
        ])
        let expected = head + fileBytes + tail
        let settings = CompressionSettings(level: 6, adaptive: true)

        let inMemory = try BodyCompressor.compress(source, settings: settings, to: .memory)
        guard case .memory(let memoryBytes) = inMemory else {
            Issue.record("expected memory")
            return
        }
        #expect(try DataDecompressor.uncompressData(memoryBytes) == expected)

        let onDisk = try BodyCompressor.compress(source, settings: settings, to: .automatic)
        guard case .file(let file, let length) = onDisk else {
            Issue.record("expected a file")
            return
        }
        #expect(file.size == length)
        #expect(length == UInt64(memoryBytes.count))
        #expect(try await CompressionOracles.verifiedInflation(of: file.path) == expected)
        let path = file.path
        file.remove()
        #expect(access(path, F_OK) != 0)
    }

    @Test("50 MiB random through a temporary file, verified by gzip and Python")
    func fiftyMiBRandom() async throws {
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        let body = TestBytes.random(50 << 20, seed: 50)
        let source = scratch + "/big.bin"
        try body.write(to: URL(fileURLWithPath: source))
        let size = UInt64(body.count)
        let compressed = try BodyCompressor.compress(
            BodySource(segments: [BodySegment(.file(FileRange(path: source, length: size, expectedFileSize: size)))]),
            settings: CompressionSettings(level: 6, adaptive: false), to: .automatic)
        guard case .file(let file, _) = compressed else {
            Issue.record("expected a file")
            return
        }
        #expect(try await CompressionOracles.verifiedInflation(of: file.path) == body)
        let back = scratch + "/back.bin"
        try DataDecompressor.uncompressDataFromFile(file.path, toFile: back)
        #expect(try Data(contentsOf: URL(fileURLWithPath: back)) == body)
    }

    @Test("text compresses well and round trips")
    func textRoundTrip() throws {
        let body = TestBytes.text(2 << 20)
        let gz = try DataCompressor.compressData(body)
        #expect(gz.count < body.count / 10)
        #expect(try DataDecompressor.uncompressData(gz) == body)
    }
}
