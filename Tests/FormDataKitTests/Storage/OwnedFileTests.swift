#if canImport(Glibc)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing

@testable import FormDataKit

/// Issue 53, the file owner itself: ``OwnedFile`` creates new files only, and removes or moves
/// a file only while its path still names the file it created.
@Suite("The file owner: files created new, removed only while they are ours")
struct OwnedFileTests {
    static func scratchDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "fdk-owned-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func unwritable(_ path: String) -> (Int32) -> FormDataError {
        { code in .fileUnwritable(path: path, errno: code) }
    }

    @Test("a new file is a regular file of this user, mode 0600, written through the descriptor returned")
    func createsPrivateRegularFile() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/new"
        let (file, descriptor) = try OwnedFile.create(at: path, failure: Self.unwritable(path))
        #expect(write(descriptor, "abc", 3) == 3)
        #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK == 0)
        close(descriptor)
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode == S_IFREG | 0o600)
        #expect(info.st_uid == geteuid())
        #expect(file.isInPlace)
        file.remove()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("anything at the path (a file, a link, a dangling link, a FIFO) is refused with fileExists naming it, and kept as it was")
    func existingPathsRefused() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/file"
        try Data("kept".utf8).write(to: URL(fileURLWithPath: file))
        let link = directory + "/link"
        let dangling = directory + "/dangling"
        let fifo = directory + "/fifo"
        #expect(symlink(file, link) == 0)
        #expect(symlink(directory + "/nothing", dangling) == 0)
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [file, link, dangling, fifo] {
            #expect(throws: FormDataError.fileExists(path: path)) {
                _ = try OwnedFile.create(at: path, failure: Self.unwritable(path))
            }
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "kept")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["dangling", "fifo", "file", "link"])
        #expect(FormDataError.fileExists(path: file).asiErrorCode == 8)
        #expect(FormDataError.whileSending(.fileExists(path: file)) == .fileManagement(underlying: .fileExists(path: file)))
    }

    @Test("a path that cannot be created fails with the caller's error for its errno; nothing is made")
    func otherFailuresUseTheCallersError() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/missing/new"
        #expect(throws: FormDataError.fileUnwritable(path: path, errno: ENOENT)) {
            _ = try OwnedFile.create(at: path, failure: Self.unwritable(path))
        }
    }

    @Test("remove() and move(to:) leave alone a file put in place of the one created")
    func replacedFileIsNotTouched() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/ours"
        let (file, descriptor) = try OwnedFile.create(at: path, failure: Self.unwritable(path))
        close(descriptor)
        #expect(rename(path, directory + "/moved") == 0)
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: path))
        #expect(!file.isInPlace)
        #expect(file.move(to: directory + "/destination") == ENOENT)
        file.remove()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "theirs")
        #expect(!FileManager.default.fileExists(atPath: directory + "/destination"))
    }

    @Test("a spool (TemporaryFile) removed after a file took its place leaves that file")
    func temporaryFileRemovesOnlyItsOwn() throws {
        let (file, descriptor) = try TemporaryStorage.makeFile(purpose: "owned-file-test")
        close(descriptor)
        let aside = file.path + "-aside"
        #expect(rename(file.path, aside) == 0)
        defer { unlink(aside) }
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: file.path))
        defer { unlink(file.path) }
        file.remove()
        #expect(try String(contentsOfFile: file.path, encoding: .utf8) == "theirs")
    }
}
