@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// Temporary files: private, removed on rebuild, release and failure; stale ones swept.
@Suite("Temporary files and spooling")
struct TemporaryFileTests {
    @Test("Spooled bodies live in a 0700 per-process directory, as 0600 files")
    func permissions() throws {
        let request = FormDataRequest(url: anyURL)
        request.addData(bytes("x"), forKey: "f")
        try request.buildPostBody()
        let path = try #require(request.postBodyFilePath)
        let directory = (path as NSString).deletingLastPathComponent
        #expect(directory == (try TemporaryStorage.directory()))
        #expect((directory as NSString).lastPathComponent.hasPrefix("FormDataKit-\(getpid())-"))
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(directory, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    @Test("A change after a build marks the body stale; the rebuild removes the old file")
    func staleRebuild() throws {
        let request = FormDataRequest(url: anyURL)
        request.multipartBoundary = fixedBoundary
        request.addData(bytes("one"), forKey: "f")
        try request.buildPostBody()
        let first = try #require(request.postBodyFilePath)
        let firstLength = request.postLength
        request.addPostValue("late", forKey: "v")
        #expect(request.postBodyFilePath == nil)
        #expect(request.requestHeaders["Content-Length"] == nil)
        #expect(!FileManager.default.fileExists(atPath: first))
        try request.buildPostBody()
        let second = try #require(request.postBodyFilePath)
        #expect(second != first)
        #expect(request.postLength > firstLength)
        #expect(String(decoding: try sentBody(request), as: UTF8.self).contains("name=\"v\"\r\n\r\nlate\r\n"))
        // A second build without changes keeps the same body.
        try request.buildPostBody()
        #expect(request.postBodyFilePath == second)
    }

    @Test("Changing a setting (encoding, format, method, boundary) also rebuilds")
    func settingsInvalidate() throws {
        let request = FormDataRequest(url: anyURL)
        request.addPostValue("£", forKey: "p")
        try request.buildPostBody()
        #expect(request.postBody == bytes("p=%C2%A3"))
        request.stringEncoding = .isoLatin1
        try request.buildPostBody()
        #expect(request.postBody == bytes("p=%A3"))
        request.postFormat = .multipartFormData
        request.multipartBoundary = "b"
        try request.buildPostBody()
        #expect(request.postBody == "--b\r\nContent-Disposition: form-data; name=\"p\"\r\n\r\n\u{A3}\r\n--b--\r\n".data(using: .isoLatin1)!)
    }

    @Test("Releasing a request removes its spooled body")
    func deinitRemoves() throws {
        var path: String?
        do {
            let request = FormDataRequest(url: anyURL)
            request.addData(Data(count: 1000), forKey: "f")
            try request.buildPostBody()
            path = request.postBodyFilePath
            #expect(FileManager.default.fileExists(atPath: path!))
        }
        #expect(path != nil)
        #expect(!FileManager.default.fileExists(atPath: path!))
    }

    @Test("A file that changed size between encoding and spooling: error, no file left")
    func spoolFailureCleansUp() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("grows.bin", Data(count: 100))
        let source = BodySource(segments: [
            BodySegment(.bytes(bytes("head"))),
            BodySegment(.file(FileRange(path: path, length: 100, expectedFileSize: 100))),
        ])
        try Data(count: 150).write(to: URL(fileURLWithPath: path))
        let purpose = "grow-test-\(UInt32.random(in: 0...UInt32.max))"
        #expect(throws: FormDataError.fileChanged(path: path, expectedSize: 100, actualSize: 150)) {
            _ = try BodySpooler.spool(source, purpose: purpose)
        }
        #expect(TemporaryStorage.currentFiles().allSatisfy { !$0.contains(purpose) })
    }

    @Test("A file truncated after encoding: the reader fails instead of sending a short body")
    func readerDetectsTruncation() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("shrinks.bin", Data(count: 4096))
        let source = BodySource(segments: [BodySegment(.file(FileRange(path: path, length: 4096, expectedFileSize: 4096)))])
        truncate(path, 1000)
        #expect(throws: FormDataError.fileChanged(path: path, expectedSize: 4096, actualSize: 1000)) {
            _ = try source.readAll()
        }
        let reader = source.makeReader()
        var buffer = [UInt8](repeating: 0, count: 512)
        #expect(throws: FormDataError.fileChanged(path: path, expectedSize: 4096, actualSize: 1000)) {
            _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        }
    }

    @Test("The reader returns exactly the body, across segments, with any buffer size", arguments: [1, 7, 4096, 1 << 20])
    func readerMatchesSpool(bufferSize: Int) throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let fileData = randomData(200_001, seed: 3)
        let path = try scratch.write("part.bin", fileData)
        let big = randomData(100_000, seed: 4)
        let source = BodySource(segments: [
            BodySegment(.bytes(bytes("--head--"))),
            BodySegment(.file(FileRange(path: path, offset: 1, length: 200_000, expectedFileSize: 200_001))),
            BodySegment(.bytes(Data())),
            BodySegment(.bytes(big), partContentType: "image/jpeg"),
            BodySegment(.file(FileRange(path: path, length: 0, expectedFileSize: 200_001))),
            BodySegment(.bytes(bytes("--tail--"))),
        ])
        let expected = bytes("--head--") + fileData.dropFirst() + big + bytes("--tail--")
        #expect(source.length == UInt64(expected.count))
        let reader = source.makeReader(chunkSize: 65_536)
        var collected = Data()
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        var sawJPEG = false
        while true {
            let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if n == 0 { break }
            if source.segments[reader.segmentIndex].partContentType == "image/jpeg" { sawJPEG = true }
            collected.append(contentsOf: buffer[0..<n])
        }
        #expect(collected == expected)
        #expect(reader.isAtEnd)
        #expect(sawJPEG)
        #expect(try source.readAll() == expected)
        let spooled = try BodySpooler.spool(source)
        #expect(FileManager.default.contents(atPath: spooled.path) == expected)
        spooled.remove()
        #expect(!FileManager.default.fileExists(atPath: spooled.path))
    }

    @Test("File ranges longer than the copy buffer, at odd offsets, spool byte for byte")
    func spoolCopiesThroughBuffer() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let size = 3 * BodySpooler.copyBufferSize + 1
        let path = try scratch.write("part.bin", randomData(size, seed: 9))
        let source = BodySource(segments: [
            BodySegment(.bytes(bytes("a"))),
            BodySegment(.file(FileRange(path: path, offset: 17, length: UInt64(size - 18), expectedFileSize: UInt64(size)))),
            BodySegment(.bytes(bytes("z"))),
            BodySegment(
                .file(FileRange(path: path, offset: 0, length: UInt64(BodySpooler.copyBufferSize), expectedFileSize: UInt64(size)))),
            BodySegment(.file(FileRange(path: path, offset: UInt64(size - 1), length: 1, expectedFileSize: UInt64(size)))),
        ])
        let spooled = try BodySpooler.spool(source)
        defer { spooled.remove() }
        let expected = try source.readAll()
        #expect(expected.count == size - 18 + 2 + BodySpooler.copyBufferSize + 1)
        #expect(UInt64(expected.count) == source.length)
        // The reservation keeps the file's size: it ends at the body's last byte.
        let attributes = try FileManager.default.attributesOfItem(atPath: spooled.path)
        #expect((attributes[.size] as? UInt64) == source.length)
        #expect(FileManager.default.contents(atPath: spooled.path) == expected)
    }

    @Test("Reserving space keeps the file's size and refuses a body larger than the file system allows")
    func reserveSpace() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = scratch.path + "/reserved"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        try BodySpooler.reserveSpace(8 << 20, in: fd, path: path)
        var info = stat()
        #expect(fstat(fd, &info) == 0)
        #expect(info.st_size == 0)
        #if os(Linux)
        // Far beyond any disk: the reservation fails up front, naming the file.
        #expect {
            try BodySpooler.reserveSpace(UInt64(1) << 62, in: fd, path: path)
        } throws: { error in
            guard case FormDataError.temporaryFileFailed(let failedPath, "write", let code) = error else { return false }
            return failedPath == path && (code == ENOSPC || code == EFBIG || code == EDQUOT)
        }
        #endif
    }

    @Test("Directories left by dead processes are swept; live ones are kept")
    func sweepStale() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        // Stale: a private directory (0700, ours) whose lock file nobody holds. (Whether a
        // process holds the lock decides, not its pid: see TemporaryStorageSweepTests.)
        let dead = "\(scratch.path)/FormDataKit-\(Int32.max - 1)-stale"
        // Not one of ours to judge: no lock file (a live process's directory always has one).
        let live = "\(scratch.path)/FormDataKit-\(getppid())-alive"
        let other = "\(scratch.path)/unrelated-\(Int32.max - 1)"
        for dir in [dead, live, other] {
            try FileManager.default.createDirectory(
                atPath: dir, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/body-1"))
        }
        try Data().write(to: URL(fileURLWithPath: dead + "/.lock"))
        let removed = TemporaryStorage.sweepStaleDirectories(in: scratch.path)
        #expect(removed == [dead])
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(FileManager.default.fileExists(atPath: other))
    }

    @Test("A failed build leaves nothing behind: the second file is missing")
    func failedBuildLeavesNothing() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let a = try scratch.write("a.txt", "a")
        let b = try scratch.write("b.txt", "b")
        let request = FormDataRequest(url: anyURL)
        try request.addFile(a, forKey: "a")
        try request.addFile(b, forKey: "b")
        try FileManager.default.removeItem(atPath: b)
        #expect(throws: FormDataError.fileNotFound(path: b)) { try request.buildPostBody() }
        #expect(request.postBodyFilePath == nil)
        #expect(request.postLength == 0)
        // The missing file is found while encoding, before any temporary file is created; a
        // failure while spooling is covered by spoolFailureCleansUp.
    }
}
