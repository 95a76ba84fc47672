@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import CZlib
import Foundation
import Testing
@testable import FormDataKit

/// Adaptive compression: already-compressed parts are stored (level 0) inside the same gzip
/// stream, which still inflates to exactly the body.
@Suite("Compression: adaptive levels")
struct CompressionAdaptiveTests {
    /// A form request with a ~1 MiB JPEG-typed random part between two text parts.
    static func makeRequest(jpeg: Data, text: Data) -> FormDataRequest {
        let request = FormDataRequest(url: URL(string: "http://example.com/upload")!)
        request.multipartBoundary = "0xKhTmLbOuNdArY-FIXED"
        request.setPostValue("caption", forKey: "title")
        request.addData(text, withFileName: "notes.txt", andContentType: "text/plain", forKey: "notes")
        request.addData(jpeg, withFileName: "photo.jpg", andContentType: "image/jpeg", forKey: "photo")
        request.addData(text, withFileName: "more.txt", andContentType: "text/plain; charset=utf-8", forKey: "more")
        return request
    }

    @Test("a JPEG part costs a few bytes per 64 KiB; the stream inflates exactly")
    func jpegPartIsStored() async throws {
        let jpeg = TestBytes.random(1 << 20, seed: 77)
        let text = TestBytes.text(300_000)
        let request = Self.makeRequest(jpeg: jpeg, text: text)
        try request.buildPostBody()
        let source = try #require(request.bodySource)
        let body = try source.readAll()

        var adaptiveOut = Data()
        let summary = try BodyCompressor.compress(source, settings: CompressionSettings(level: 6, adaptive: true)) {
            (chunk) throws(FormDataError) in adaptiveOut.append(contentsOf: chunk)
        }
        // text → jpeg (0) → text (6): exactly two switches.
        #expect(summary.levelChanges == 2)
        #expect(summary.bytesIn == source.length)
        #expect(summary.bytesOut == UInt64(adaptiveOut.count))
        #expect(try DataDecompressor.uncompressData(adaptiveOut) == body)
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        #expect(try await CompressionOracles.verifiedInflation(of: adaptiveOut, scratch: scratch) == body)

        // Adaptive never costs more than deflating everything at level 6 (which stores random
        // data too, but only after trying, and with a stored block per 16 KiB).
        var level6Out = Data()
        try BodyCompressor.compress(source, settings: CompressionSettings(level: 6, adaptive: false)) {
            (chunk) throws(FormDataError) in level6Out.append(contentsOf: chunk)
        }
        #expect(adaptiveOut.count <= level6Out.count, "adaptive \(adaptiveOut.count) vs level 6 \(level6Out.count)")
    }

    @Test("stored JPEG bytes cost 5 bytes per 64 KiB block plus a block boundary")
    func storedCostPerBlock() throws {
        let jpeg = TestBytes.random(1 << 20, seed: 79)
        let text = TestBytes.text(200_000)
        let deflater = try GzipDeflater(level: 6)
        var out = Data()
        let sink: GzipDeflater.Sink = { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
        try deflater.compress(text, into: sink)
        try deflater.setLevel(0, into: sink)
        let before = deflater.bytesOut
        try deflater.compress(jpeg, into: sink)
        try deflater.setLevel(6, into: sink)
        let jpegCost = deflater.bytesOut - before
        try deflater.compress(text, into: sink)
        try deflater.finish(into: sink)
        let storedBlocks = UInt64((jpeg.count + 65_534) / 65_535)
        #expect(jpegCost >= UInt64(jpeg.count))
        #expect(jpegCost <= UInt64(jpeg.count) + storedBlocks * 5 + 8, "cost \(jpegCost) for \(jpeg.count) bytes")
        #expect(try DataDecompressor.uncompressData(out) == text + jpeg + text)
    }

    @Test("adaptive off compresses every part at the chosen level and inflates exactly")
    func adaptiveOff() throws {
        let jpeg = TestBytes.random(300_000, seed: 78)
        let text = TestBytes.text(100_000)
        let request = Self.makeRequest(jpeg: jpeg, text: text)
        try request.buildPostBody()
        let source = try #require(request.bodySource)
        var out = Data()
        let summary = try BodyCompressor.compress(source, settings: CompressionSettings(level: 6, adaptive: false)) {
            (chunk) throws(FormDataError) in out.append(contentsOf: chunk)
        }
        #expect(summary.levelChanges == 0)
        #expect(try DataDecompressor.uncompressData(out) == source.readAll())
    }

    @Test("the level for a segment follows its part type; short structure keeps the current level")
    func levelRules() {
        let structure = BodySegment(.bytes(Data(count: 100)))
        let bigStructure = BodySegment(.bytes(Data(count: 5000)))
        #expect(BodyCompressor.level(for: structure, chosen: 6) == nil)
        #expect(BodyCompressor.level(for: bigStructure, chosen: 6) == 6)
        #expect(BodyCompressor.level(for: BodySegment(.bytes(Data()), partContentType: "IMAGE/PNG"), chosen: 9) == 0)
        #expect(BodyCompressor.level(for: BodySegment(.bytes(Data()), partContentType: "text/csv"), chosen: 9) == 9)
        #expect(AlreadyCompressedTypes.contains("video/mp4; codecs=avc1"))
        #expect(AlreadyCompressedTypes.contains("application/vnd.openxmlformats-officedocument.wordprocessingml.document"))
        #expect(!AlreadyCompressedTypes.contains("application/octet-stream"))
        #expect(!AlreadyCompressedTypes.contains("image/svg+xml"))
    }

    @Test("switching levels with a small output buffer at every chunk still gives one exact stream")
    func manySwitchesSmallBuffer() async throws {
        let deflater = try GzipDeflater(level: 9, outputCapacity: 4096)
        var out = Data()
        let sink: GzipDeflater.Sink = { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
        var expected = Data()
        for round in 0..<24 {
            let piece = round % 2 == 0 ? TestBytes.text(70_000 + round) : TestBytes.random(90_000, seed: UInt64(round))
            try deflater.setLevel(Int32(round % 10), into: sink)
            try deflater.compress(piece, into: sink)
            expected.append(piece)
        }
        try deflater.finish(into: sink)
        #expect(deflater.levelChanges >= 20)
        #expect(try DataDecompressor.uncompressData(out) == expected)
        let scratch = try CompressionOracles.makeScratch()
        defer { CompressionOracles.removeScratch(scratch) }
        #expect(try await CompressionOracles.verifiedInflation(of: out, scratch: scratch) == expected)
    }

    @Test("invalid levels and use after finish are typed errors")
    func deflaterMisuse() throws {
        #expect(throws: FormDataError.compressionFailed(code: Z_STREAM_ERROR, message: "invalid compression level 10 (use -1 or 0...9)")) {
            _ = try GzipDeflater(level: 10)
        }
        let deflater = try GzipDeflater()
        let sink: GzipDeflater.Sink = { (_) throws(FormDataError) in }
        #expect(throws: FormDataError.self) { try deflater.setLevel(-2, into: sink) }
        try deflater.finish(into: sink)
        #expect(throws: FormDataError.compressionFailed(code: Z_STREAM_ERROR, message: "the gzip stream is already finished")) {
            try deflater.compress(Data([1]), into: sink)
        }
    }

    @Test("a failing sink stops compression with its error")
    func sinkErrorPropagates() throws {
        let deflater = try GzipDeflater(outputCapacity: 4096)
        let failure = FormDataError.temporaryFileFailed(path: "/x", operation: "write", errno: ENOSPC)
        let sink: GzipDeflater.Sink = { (_) throws(FormDataError) in throw failure }
        #expect(throws: failure) {
            try deflater.compress(TestBytes.random(100_000), into: sink)
            try deflater.finish(into: sink)
        }
    }
}
