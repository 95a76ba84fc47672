import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

/// Decompression bombs: every inflater FormDataKit offers takes an output limit.
@Suite("Decompression limits: DataDecompressor and FormSnapshot stop at their limit")
struct DecompressionLimitTests {
    /// 8 MiB of zeros, gzip-compressed (~8 KiB).
    static func bomb() throws -> Data { try DataCompressor.compressData(Data(count: 8 << 20)) }

    @Test("uncompressData(maximumSize:) fails as soon as the output passes the limit; without one it inflates all")
    func dataLimit() throws {
        let bomb = try Self.bomb()
        #expect(throws: FormDataError.decompressedSizeLimitExceeded(limit: 1 << 20)) {
            _ = try DataDecompressor.uncompressData(bomb, maximumSize: 1 << 20)
        }
        #expect(try DataDecompressor.uncompressData(bomb).count == 8 << 20)
        #expect(try DataDecompressor.uncompressData(bomb, maximumSize: 8 << 20).count == 8 << 20)
    }

    @Test("uncompressDataFromFile(maximumSize:) fails past the limit and leaves no destination file")
    func fileLimit() throws {
        let directory = NSTemporaryDirectory() + "fdk-bomb-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = directory + "/bomb.gz"
        let destination = directory + "/out"
        try Self.bomb().write(to: URL(fileURLWithPath: source))
        #expect(throws: FormDataError.decompressedSizeLimitExceeded(limit: 1 << 20)) {
            try DataDecompressor.uncompressDataFromFile(source, toFile: destination, maximumSize: 1 << 20)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["bomb.gz"])
    }

    @Test("a capture whose gzip body inflates past the limit is a malformed body, not memory exhaustion")
    func snapshotLimit() throws {
        let bomb = try Self.bomb()
        let headers = [
            ReceivedHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"),
            ReceivedHeader(name: "Content-Encoding", value: "gzip"),
        ]
        #expect(throws: FormSnapshotError.self) {
            _ = try FormSnapshot(
                method: "POST", url: "http://x/", headers: headers, body: bomb,
                maximumInflatedSize: 1 << 20)
        }
        #expect(FormSnapshot.maximumInflatedSize == 256 << 20)
    }
}
