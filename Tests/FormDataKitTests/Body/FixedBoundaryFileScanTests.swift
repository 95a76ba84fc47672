#if canImport(Glibc)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import FormDataKitTestSupport
import Testing
@testable import FormDataKit

/// A boundary the caller fixed must not occur in a file part either: the file's content is
/// scanned (in chunks, bounded memory) when the body is encoded. A generated boundary is not
/// checked against files.
@Suite("Fixed boundary against file content")
struct FixedBoundaryFileScanTests {
    static let boundary = "FixedBoundary42"
    static let injection = "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"injected\"\r\n\r\nevil"

    @Test("A file containing the fixed delimiter: boundaryCollision naming the file field, no temporary file")
    func fileWithDelimiterRefused() async throws {
        // In a child: `currentFiles()` is then this case's alone.
        try await Isolation.run(case: "refused") {
            let scratch = try Scratch()
            defer { scratch.cleanup() }
            let path = try scratch.write("upload.txt", "harmless start" + Self.injection + "\r\nrest")
            for gzip in [false, true] {
                let request = FormDataRequest(url: anyURL)
                request.multipartBoundary = Self.boundary
                request.shouldCompressRequestBody = gzip
                request.addPostValue("plain", forKey: "value")
                try request.addFile(path, forKey: "upload")
                #expect(throws: FormDataError.boundaryCollision(boundary: Self.boundary, field: "upload")) {
                    try request.buildPostBody()
                }
                #expect(request.postBodyFilePath == nil)
                #expect(request.postLength == 0)
                #expect(TemporaryStorage.currentFiles().isEmpty, "left: \(TemporaryStorage.currentFiles())")
            }
        }
    }

    @Test("A file without the delimiter (near misses only) builds byte for byte")
    func fileWithoutDelimiterBuilds() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let content = "-\(Self.boundary) --FixedBoundary4 --fixedboundary42 -\r\n-\(Self.boundary)"
        let path = try scratch.write("clean.txt", content)
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = Self.boundary
        try request.addFile(path, forKey: "upload")
        try request.buildPostBody()
        let body = String(decoding: try sentBody(request), as: UTF8.self)
        #expect(
            body == "--\(Self.boundary)\r\n"
                + "Content-Disposition: form-data; name=\"upload\"; filename=\"clean.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\n" + content + "\r\n--\(Self.boundary)--\r\n")
    }

    @Test("A delimiter split across the scan chunk border is found")
    func delimiterAcrossChunkBorder() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let chunk = MultipartWriter.fileScanChunkSize
        let delimiter = Array("--\(Self.boundary)".utf8)
        // Through a request, with the default chunk: the file is larger than two chunks and the
        // delimiter starts 5 bytes before the first border.
        var data = Data(repeating: UInt8(ascii: "a"), count: 2 * chunk + 1000)
        data.replaceSubrange((chunk - 5)..<(chunk - 5 + delimiter.count), with: delimiter)
        let path = try scratch.write("big.bin", data)
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = Self.boundary
        try request.addFile(path, forKey: "big")
        #expect(throws: FormDataError.boundaryCollision(boundary: Self.boundary, field: "big")) {
            try request.buildPostBody()
        }
    }

    @Test("The writer finds the delimiter at every position around chunk borders, only inside the range")
    func everyPositionAroundBorders() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let delimiter = Array("--\(Self.boundary)".utf8)
        let chunk = 64
        let size = 4 * chunk + 7
        let filler = Data(repeating: UInt8(ascii: "-"), count: size)  // dashes: worst case for a first-byte search
        let clean = try scratch.write("clean.bin", filler)
        #expect(try !Self.collides(FileRange(path: clean, length: UInt64(size), expectedFileSize: UInt64(size)), chunk: chunk))
        for start in 0...(size - delimiter.count) {
            var data = filler
            data.replaceSubrange(start..<(start + delimiter.count), with: delimiter)
            let path = try scratch.write("at-\(start).bin", data)
            let whole = FileRange(path: path, length: UInt64(size), expectedFileSize: UInt64(size))
            #expect(try Self.collides(whole, chunk: chunk), "delimiter at \(start) missed")
            // A range that starts one byte into the delimiter does not contain it.
            let after = UInt64(start + 1)
            let tail = FileRange(path: path, offset: after, length: UInt64(size) - after, expectedFileSize: UInt64(size))
            #expect(try !Self.collides(tail, chunk: chunk), "delimiter outside the range at \(start) reported")
            unlink(path)
        }
    }

    /// Whether the writer with a fixed boundary refuses a part with `range`, scanning `chunk` bytes at a time.
    static func collides(_ range: FileRange, chunk: Int) throws -> Bool {
        let part = MultipartPart(
            fieldName: "f", headers: [MultipartHeader(name: "Content-Disposition", value: "form-data; name=\"f\"")],
            content: .file(range), contentType: nil)
        var builder = BodyBuilder(encoding: .utf8, debug: false)
        let writer = MultipartWriter(boundary: boundary, scanFileContent: true, fileScanChunkSize: chunk)
        do {
            try writer.write([part], into: &builder)
        } catch {
            guard error == .boundaryCollision(boundary: boundary, field: "f") else { throw error }
            return true
        }
        return false
    }

    @Test("A generated boundary does not read file content (today's behaviour, documented)")
    func generatedBoundaryDoesNotScan() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let generated = MultipartBoundary.makeASIBoundary()
        let path = try scratch.write("f.txt", "x--\(generated)y")
        var form = Form()
        form.addFile(FormFileField(name: "f", fileName: "f.txt", contentType: "text/plain", content: .file(path: path)))
        let encoded = try FormEncoder.multipart(form, encoding: .utf8, boundary: generated, regenerateOnCollision: true, debug: false)
        #expect(encoded.boundary == generated)
        let fixed = FormDataRequest(url: anyURL)
        fixed.multipartBoundary = generated
        try fixed.addFile(path, forKey: "f")
        #expect(throws: FormDataError.boundaryCollision(boundary: generated, field: "f")) { try fixed.buildPostBody() }
    }
}

/// The in-memory search the file scan is built on, against a plain reference search.
@Suite("Byte search")
struct ByteSearchTests {
    static func reference(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    @Test("Matches a reference search on dash-heavy content, at every position and length")
    func matchesReference() {
        let needles = ["--B", "--a-b", "---", "--", "-", "x", "--0xKhTmLbOuNdArY-A1", ""].map { Array($0.utf8) }
        var generator = SystemRandomNumberGenerator()
        for needle in needles {
            for length in 0..<40 {
                for _ in 0..<30 {
                    // Built from the needle's own bytes and dashes, so near misses are common.
                    let alphabet = Array(Set(needle + [UInt8(ascii: "-"), UInt8(ascii: "z")]))
                    let haystack = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
                    let found = haystack.withUnsafeBytes { ByteSearch.contains($0, needle) }
                    #expect(
                        found == Self.reference(haystack, needle),
                        "\(String(decoding: needle, as: UTF8.self)) in \(String(decoding: haystack, as: UTF8.self))")
                }
            }
        }
    }
}
