#if canImport(Glibc)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import FormDataKitAF
import FormDataKitTestSupport
import Testing
@testable import FormDataKit

/// A file whose name is not valid UTF-8 (Linux allows it) cannot be named by a Swift `String`:
/// the `String` a caller holds has U+FFFD where the bytes were. It is refused with
/// `fileNameNotUTF8`, whose path shows the real bytes escaped (`bad\xFF.txt`) — not "No file
/// exists at …/bad\u{FFFD}.txt", a name no file has.
@Suite("A file name that is not UTF-8: refused, naming its bytes")
struct NonUTF8FileNameTests {
    /// A scratch directory holding `bad<0xFF>.txt` (4 bytes), made from raw bytes with `open(2)`.
    struct BadlyNamedFile {
        let scratch: Scratch
        /// The path's bytes.
        let bytes: [UInt8]
        /// The path as a Swift `String` holds it: U+FFFD for the 0xFF byte.
        var lossyPath: String { String(decoding: bytes, as: UTF8.self) }
        /// The path as the error shows it.
        var escapedPath: String { scratch.path + #"/bad\xFF.txt"# }

        init() throws {
            scratch = try Scratch()
            bytes = Array(scratch.path.utf8) + Array("/bad".utf8) + [0xFF] + Array(".txt".utf8)
            let descriptor = (bytes + [0]).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o600) }
            }
            guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            _ = write(descriptor, "data", 4)
            close(descriptor)
        }

        /// A file URL made from the path's bytes (swift-foundation on Linux puts U+FFFD in its path too).
        var url: URL {
            (bytes + [0]).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    URL(fileURLWithFileSystemRepresentation: $0.baseAddress!, isDirectory: false, relativeTo: nil)
                }
            }
        }
    }

    @Test("addFile, setFile and appendPostDataFromFile refuse it naming the bytes; nothing is added")
    func refusedWhenAdded() throws {
        let file = try BadlyNamedFile()
        defer { file.scratch.cleanup() }
        let expected = FormDataError.fileNameNotUTF8(path: file.escapedPath)
        let request = FormDataRequest(url: anyURL)
        #expect(throws: expected) { try request.addFile(file.lossyPath, forKey: "f") }
        #expect(throws: expected) { try request.setFile(file.lossyPath, withFileName: "ok.txt", andContentType: nil, forKey: "f") }
        #expect(throws: expected) { try request.appendPostDataFromFile(file.lossyPath) }
        #expect(request.form.isEmpty)
        #expect(expected.asiErrorCode == 6)
        #expect(expected.description.contains(#"/bad\xFF.txt has a name that is not valid UTF-8"#), "\(expected.description)")
        #expect(!expected.description.contains("\u{FFFD}"))
    }

    @Test("postBodyFilePath set to it fails the build naming the bytes")
    func postBodyFilePathRefusedAtBuild() throws {
        let file = try BadlyNamedFile()
        defer { file.scratch.cleanup() }
        let request = FormDataRequest(url: anyURL)
        request.postBodyFilePath = file.lossyPath
        #expect(throws: FormDataError.fileNameNotUTF8(path: file.escapedPath)) { try request.buildPostBody() }
    }

    @Test("FormDataKitAF's appendPart(withFileURL:) refuses it naming the bytes (a URL made from them has U+FFFD too on Linux)")
    func afRefused() throws {
        let file = try BadlyNamedFile()
        defer { file.scratch.cleanup() }
        for url in [file.url, URL(fileURLWithPath: file.lossyPath)] {
            #expect(throws: FormDataError.fileNameNotUTF8(path: file.escapedPath)) {
                _ = try AFHTTPRequestSerializer.serializer().multipartFormRequest(
                    withMethod: "POST", urlString: "http://example.com/", parameters: nil
                ) { form in try form.appendPart(withFileURL: url, name: "f") }
            }
        }
    }

    @Test("a name that really holds U+FFFD is a name like any other; a missing path is still fileNotFound")
    func noFalsePositives() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("odd\u{FFFD}.txt", "data")
        let request = FormDataRequest(url: anyURL)
        try request.addFile(path, forKey: "f")
        #expect(request.form.files.first?.fileName == "odd\u{FFFD}.txt")
        let missing = scratch.path + "/gone\u{FFFD}.txt"
        #expect(throws: FormDataError.fileNotFound(path: missing)) { try request.addFile(missing, forKey: "g") }
    }

    @Test("the escaped form: invalid bytes as \\xNN, a backslash doubled, valid UTF-8 kept")
    func display() {
        #expect(NonUTF8FileNames.display(Array("/tmp/é".utf8) + [0xFF, 0xC3, 0x41]) == #"/tmp/é\xFF\xC3A"#)
        #expect(NonUTF8FileNames.display(Array(#"a\b"#.utf8) + [0x80]) == #"a\\b\x80"#)
    }

    @Test("formdata post -F file=@<a name that is not UTF-8> names the bytes")
    func cliNamesTheBytes() async throws {
        let tool = try PostNetworkFlagsTests.tool()
        let file = try BadlyNamedFile()
        defer { file.scratch.cleanup() }
        // The name's 0xFF byte goes through the shell's printf (a Swift String cannot carry it).
        let result = try await ChildProcess.run(
            "/bin/sh",
            ["-c", #"exec "$0" post http://127.0.0.1:9/ -F "f=@$1/$(printf 'bad\377.txt')""#, tool.path, file.scratch.path])
        let output = String(decoding: result.stderr + result.stdout, as: UTF8.self)
        #expect(result.status != 0)
        #expect(output.contains(file.escapedPath), "\(output.debugDescription)")
    }
}
