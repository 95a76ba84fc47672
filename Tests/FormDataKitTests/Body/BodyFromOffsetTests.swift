@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// A body read from an offset (a read-ahead's restart, a resumed upload's append) is the body
/// read from the start, less the bytes before the offset: every file part after it — an empty
/// one too — is checked as a read from the start checks it.
@Suite("A body from an offset")
struct BodyFromOffsetTests {
    @Test("An empty file part after the offset stays in the body, and one that grew fails the read from there")
    func emptyFileAfterTheOffset() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("from-offset-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let empty = BodySegment(.file(FileRange(path: path, length: 0, expectedFileSize: 0)))
        let source = BodySource(segments: [BodySegment(.bytes(Data("abc".utf8))), empty, BodySegment(.bytes(Data("de".utf8)))])
        #expect(source.suffix(from: 1).segments == [BodySegment(.bytes(Data("bc".utf8))), empty, BodySegment(.bytes(Data("de".utf8)))])
        #expect(source.suffix(from: 3).segments == [empty, BodySegment(.bytes(Data("de".utf8)))])
        #expect(source.suffix(from: 5).segments == [])

        // The file grows after the body was built: from the start and from an offset alike, the
        // read fails naming it, rather than send a body whose parts no longer match the files.
        try Data("xyz".utf8).write(to: URL(fileURLWithPath: path))
        for offset: UInt64 in [0, 1, 3] {
            let reader = BodyReadAhead.reader(of: source, from: offset, chunkSize: 64)
            var buffer = [UInt8](repeating: 0, count: 64)
            #expect(throws: FormDataError.fileChanged(path: path, expectedSize: 0, actualSize: 3), "from \(offset)") {
                while try buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }) > 0 {}
            }
        }
    }
}
