@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// Edge cases and bad input: every one gets exact bytes or a typed error naming what is wrong.
@Suite("Edge cases and bad input")
struct EdgeCaseTests {
    let B = fixedBoundary

    @Test("Only files: the body starts with the first file part")
    func onlyFiles() throws {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        request.addData(bytes("x"), withFileName: "a.bin", andContentType: "application/x-thing", forKey: "f")
        try request.buildPostBody()
        #expect(
            try sentBody(request)
                == bytes(
                    "--\(B)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\nContent-Type: application/x-thing\r\n\r\nx\r\n--\(B)--\r\n"
                ))
    }

    @Test("Values always precede files, whatever the call order")
    func valuesBeforeFiles() throws {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        request.addData(bytes("D"), forKey: "d")
        request.addPostValue("V", forKey: "v")
        try request.buildPostBody()
        let text = String(decoding: try sentBody(request), as: UTF8.self)
        #expect(text.range(of: "name=\"v\"")!.lowerBound < text.range(of: "name=\"d\"")!.lowerBound)
    }

    @Test("An empty file and 0-byte data are empty parts")
    func emptyFileAndData() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let empty = try scratch.write("empty.txt", Data())
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        try request.addFile(empty, forKey: "f")
        request.addData(Data(), forKey: "d")
        try request.buildPostBody()
        #expect(
            try sentBody(request)
                == bytes(
                    "--\(B)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"empty.txt\"\r\nContent-Type: text/plain\r\n\r\n\r\n"
                        + "--\(B)\r\nContent-Disposition: form-data; name=\"d\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--\(B)--\r\n"
                ))
    }

    @Test("A huge value (8 MiB) is encoded whole, in memory and multipart")
    func hugeValue() throws {
        let value = String(repeating: "ab c", count: 2 << 20)
        let request = FormDataRequest(url: anyURL)
        request.addPostValue(value, forKey: "big")
        try request.buildPostBody()
        #expect(request.postLength == UInt64(4 + (2 << 20) * 6))
        request.postFormat = .multipartFormData
        request.multipartBoundary = B
        try request.buildPostBody()
        let body = try sentBody(request)
        #expect(body.count == 52 + 4 + 38 + 3 + 5 + value.utf8.count + 52 + 8)
        #expect(body.suffix(62) == bytes(String(value.suffix(2)) + "\r\n--\(B)--\r\n"))
    }

    @Test("Non-ASCII names and filenames are written raw in the string encoding, like browsers")
    func nonASCIINames() throws {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        request.addData(bytes("x"), withFileName: "résumé – 履歴書.pdf", andContentType: nil, forKey: "dócument")
        try request.buildPostBody()
        let body = try sentBody(request)
        #expect(ByteSearch.contains(body, Array("name=\"dócument\"; filename=\"résumé – 履歴書.pdf\"".utf8)))
    }

    @Test("Quotes, CR and LF in names and filenames are escaped as %22, %0D, %0A (differs from ASI)")
    func injectionEscaped() throws {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = B
        request.addPostValue("v", forKey: "a\"\r\nX-Injected: 1")
        request.addData(bytes("x"), withFileName: "evil\".txt\r\nContent-Type: text/html", andContentType: nil, forKey: "f\n")
        try request.buildPostBody()
        let text = String(decoding: try sentBody(request), as: UTF8.self)
        #expect(text.contains("Content-Disposition: form-data; name=\"a%22%0D%0AX-Injected: 1\"\r\n\r\nv\r\n"))
        #expect(
            text.contains(
                "Content-Disposition: form-data; name=\"f%0A\"; filename=\"evil%22.txt%0D%0AContent-Type: text/html\"\r\nContent-Type: application/octet-stream\r\n"
            ))
        #expect(!text.contains("\r\nX-Injected"))
    }

    @Test("A content type with CR/LF/NUL is refused, naming the field")
    func badContentType() throws {
        let request = FormDataRequest(url: anyURL)
        request.addData(bytes("x"), withFileName: "a", andContentType: "text/plain\r\nX-Evil: 1", forKey: "upload")
        #expect(throws: FormDataError.invalidHeaderValue(field: "upload", value: "text/plain\r\nX-Evil: 1")) {
            try request.buildPostBody()
        }
        #expect(request.postLength == 0)
    }

    @Test("addFile with a missing file or a directory throws at once, naming the path")
    func missingFileAndDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let request = FormDataRequest(url: anyURL)
        #expect(throws: FormDataError.fileNotFound(path: "\(scratch.path)/nope.txt")) {
            try request.addFile("\(scratch.path)/nope.txt", forKey: "f")
        }
        #expect(throws: FormDataError.fileIsDirectory(path: scratch.path)) {
            try request.setFile(scratch.path, forKey: "f")
        }
        #expect(request.form.isEmpty)
        #expect(FormDataError.fileNotFound(path: "/x").description == "No file exists at /x")
    }

    /// Mode 0: nobody may read it. 0o044: the group and the others may, the owner may not — the
    /// owner's bits decide for the owner, and `addFile` takes only the owner's read bit as enough
    /// without `access(2)`, so this file must still reach it and be refused.
    @Test(
        "An unreadable file is refused at add time, whatever its group and other bits allow",
        .enabled(if: geteuid() != 0, "root can read anything"), arguments: [mode_t(0), mode_t(0o044)])
    func unreadableFile(mode: mode_t) throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("secret.txt", "s")
        chmod(path, mode)
        #expect(throws: FormDataError.fileUnreadable(path: path, errno: EACCES)) {
            try FormDataRequest(url: anyURL).addFile(path, forKey: "f")
        }
        chmod(path, 0o400)
        try FormDataRequest(url: anyURL).addFile(path, forKey: "f")
    }

    @Test("Only the owner's read bit, for a process that is the owner and not set-user-ID, leaves access(2) out")
    func ownerReadBitRule() {
        let owner: uid_t = 1000
        let other: uid_t = 1001
        #expect(FileInspection.ownerMayRead(mode: S_IFREG | 0o400, owner: owner, realUser: owner, effectiveUser: owner))
        #expect(FileInspection.ownerMayRead(mode: S_IFREG | 0o600, owner: owner, realUser: owner, effectiveUser: owner))
        // Group and others may read, the owner may not: access(2) decides (and refuses).
        #expect(!FileInspection.ownerMayRead(mode: S_IFREG | 0o044, owner: owner, realUser: owner, effectiveUser: owner))
        // Someone else's file, even readable by all: access(2) decides.
        #expect(!FileInspection.ownerMayRead(mode: S_IFREG | 0o444, owner: other, realUser: owner, effectiveUser: owner))
        // A set-user-ID process: access(2) answers for the real user.
        #expect(!FileInspection.ownerMayRead(mode: S_IFREG | 0o400, owner: owner, realUser: other, effectiveUser: owner))
        #expect(!FileInspection.ownerMayRead(mode: S_IFREG | 0o400, owner: owner, realUser: owner, effectiveUser: other))
    }

    @Test(
        "A file made unreadable after it was added: the build sizes it (no second access check), the send fails naming it",
        .enabled(if: geteuid() != 0, "root can read anything"))
    func unreadableAfterAdd() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("secret.txt", "s")
        // Port 9 (discard): nothing listens; the small body is read before any connection.
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
        request.transport = CurlTransport.shared
        try request.addFile(path, forKey: "f")
        chmod(path, 0)
        try request.buildPostBody()
        #expect(request.startSynchronous() == .internalErrorWhileBuilding(underlying: .fileUnreadable(path: path, errno: EACCES)))
    }

    @Test("A file deleted after it was added: typed error at build, nothing left on disk")
    func fileDeletedBeforeBuild() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("gone.txt", "soon gone")
        let request = FormDataRequest(url: anyURL)
        request.addPostValue("v", forKey: "k")
        try request.addFile(path, forKey: "f")
        try FileManager.default.removeItem(atPath: path)
        #expect(throws: FormDataError.fileNotFound(path: path)) { try request.buildPostBody() }
        #expect(request.postBodyFilePath == nil)
        #expect(request.requestHeaders["Content-Length"] == nil)
    }

    @Test("A character the encoding cannot represent is an error naming the field (ASI dropped it)")
    func unencodable() throws {
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = .isoLatin1
        request.addPostValue("fine", forKey: "ok")
        request.addPostValue("costs 5 €", forKey: "price")
        #expect(throws: FormDataError.unencodableString(field: "price", role: .value, encoding: .isoLatin1)) {
            try request.buildPostBody()
        }
        request.postFormat = .multipartFormData
        #expect(throws: FormDataError.unencodableString(field: "price", role: .value, encoding: .isoLatin1)) {
            try request.buildPostBody()
        }
        let names = FormDataRequest(url: anyURL)
        names.stringEncoding = .ascii
        names.addData(bytes("x"), withFileName: "naïve.txt", andContentType: nil, forKey: "f")
        #expect(throws: FormDataError.unencodableString(field: "f", role: .fileName, encoding: .ascii)) {
            try names.buildPostBody()
        }
        let error = FormDataError.unencodableString(field: "price", role: .value, encoding: .isoLatin1)
        #expect(error.description == "The value of field 'price' cannot be represented in iso-8859-1")
    }

    @Test("UTF-16 is refused: form bodies need an ASCII-compatible encoding")
    func utf16Refused() {
        let request = FormDataRequest(url: anyURL)
        request.stringEncoding = .utf16
        request.addPostValue("v", forKey: "k")
        #expect(throws: FormDataError.unsupportedEncoding(.utf16)) { try request.buildPostBody() }
    }

    @Test("A boundary you set that occurs in content is an error")
    func customBoundaryCollision() {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = "simple"
        request.addPostValue("text\r\n--simple\r\nmore", forKey: "tricky")
        request.postFormat = .multipartFormData
        #expect(throws: FormDataError.boundaryCollision(boundary: "simple", field: "tricky")) {
            try request.buildPostBody()
        }
    }

    @Test("A generated boundary that occurs in content is replaced by a fresh one")
    func generatedBoundaryRegenerated() throws {
        let request = FormDataRequest(url: anyURL)
        let original = request.multipartBoundary
        #expect(original.hasPrefix("0xKhTmLbOuNdArY-") && original.count == 52)
        #expect(original == original.uppercased().replacingOccurrences(of: "0XKHTMLBOUNDARY", with: "0xKhTmLbOuNdArY"))
        request.addData(bytes("payload\r\n--\(original)--\r\n"), forKey: "f")
        try request.buildPostBody()
        let used = request.multipartBoundary
        #expect(used != original)
        #expect(request.requestHeaders["Content-Type"]!.hasSuffix("boundary=\(used)"))
        let body = try sentBody(request)
        #expect(body.prefix(used.utf8.count + 4) == bytes("--\(used)\r\n"))
        #expect(!ByteSearch.contains(body.dropLast(used.utf8.count + 8), Array("--\(used)--".utf8)))
    }

    @Test("Boundaries are random per request")
    func randomBoundaries() {
        let a = FormDataRequest(url: anyURL).multipartBoundary
        let b = FormDataRequest(url: anyURL).multipartBoundary
        #expect(a != b)
    }

    @Test("Headers: addRequestHeader replaces the same-case name only")
    func headers() {
        let request = FormDataRequest(url: anyURL)
        request.addRequestHeader("X-A", value: "1")
        request.addRequestHeader("X-A", value: "2")
        request.addRequestHeader("x-a", value: "3")
        #expect(request.requestHeaders == ["X-A": "2", "x-a": "3"])
    }

    @Test("Concurrent adds from many threads lose nothing")
    func concurrentAdds() async throws {
        let request = FormDataRequest(url: anyURL)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<500 {
                group.addTask { request.addPostValue(i, forKey: "k\(i)") }
            }
        }
        #expect(request.form.values.count == 500)
        try request.buildPostBody()
        let text = String(decoding: request.postBody!, as: UTF8.self)
        #expect(Set(text.split(separator: "&")).count == 500)
    }
}

@Suite("ASCII case-insensitive header names")
struct ASCIICaseInsensitiveTests {
    @Test func comparesLettersWithoutCaseOnly() {
        #expect("Content-Disposition".equalsIgnoringASCIICase("content-disposition"))
        #expect("CONTENT-TYPE".equalsIgnoringASCIICase("Content-Type"))
        #expect(!"Content-Type".equalsIgnoringASCIICase("Content-Typ"))
        #expect(!"a@".equalsIgnoringASCIICase("a`"))  // 0x40 vs 0x60: not letters
        #expect(!"[".equalsIgnoringASCIICase("{"))  // 0x5B vs 0x7B: not letters
        #expect(!"é".equalsIgnoringASCIICase("É"))  // ASCII only
    }
}
