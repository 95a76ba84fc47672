@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// A send's build opens its file parts to check them and its first read of each, on the same
/// thread, takes the descriptor; what is not taken is closed when the start ends.
@Suite("Files opened by a send's build")
struct FilesOpenedByBuildTests {
    private static let url = URL(string: "http://127.0.0.1/")!

    /// Whether `descriptor` is (still) open on the file at `path`.
    private static func isOpen(_ descriptor: Int32, on path: String) -> Bool {
        var open = stat()
        var named = stat()
        guard fstat(descriptor, &open) == 0, stat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// A scratch file of `count` bytes and a request with it as its one file part.
    private static func formWithOneFile(count: Int, seed: UInt64) throws -> (ScratchBytes, FormDataRequest) {
        let file = try ScratchBytes(count: count, seed: seed)
        let request = FormDataRequest(url: url)
        try request.addFile(file.path, forKey: "file")
        return (file, request)
    }

    @Test("inside collect, the build opens each file part once and the reads take the descriptors, in order, per path and size")
    func readsTakeTheBuildsDescriptors() throws {
        let file = try ScratchBytes(count: 3_000, seed: 21)
        let other = try ScratchBytes(count: 500, seed: 22)
        defer {
            file.remove()
            other.remove()
        }
        let request = FormDataRequest(url: Self.url)
        request.addPostValue("a value", forKey: "field")
        try request.addFile(file.path, forKey: "first")
        try request.addFile(other.path, forKey: "second")
        try request.addFile(file.path, forKey: "again")
        try FilesOpenedByBuild.collect {
            try request.buildPostBody()
            let source = try #require(request.bodySource)
            let ranges = source.segments.compactMap { segment -> FileRange? in
                if case .file(let range) = segment.content { return range }
                return nil
            }
            #expect(ranges.map(\.path) == [file.path, other.path, file.path])
            let opened = try ranges.map { try OpenedFileRange($0) }
            // Each read took a descriptor of its own: none left for a fourth.
            #expect(FilesOpenedByBuild.current?.take(path: file.path, expectedSize: 3_000) == nil)
            #expect(Set(opened.map(\.descriptor)).count == 3)
            #expect(zip(opened, ranges).allSatisfy { Self.isOpen($0.descriptor, on: $1.path) })
            // The whole body still reads (its reads open the files again).
            let body = try source.readAll()
            #expect(body.count == Int(source.length))
            #expect(body.range(of: file.bytes) != nil && body.range(of: other.bytes) != nil)
        }
        #expect(FilesOpenedByBuild.current == nil)
    }

    @Test("what the send leaves untaken is closed when collect ends; a build outside collect keeps nothing open")
    func untakenDescriptorsAreClosed() throws {
        let (file, request) = try Self.formWithOneFile(count: 2_000, seed: 23)
        defer { file.remove() }
        var kept: [Int32] = []
        try FilesOpenedByBuild.collect {
            try request.buildPostBody()
            kept = FilesOpenedByBuild.current?.keptDescriptors ?? []
            #expect(kept.count == 1 && kept.allSatisfy { Self.isOpen($0, on: file.path) })
        }
        #expect(!kept.isEmpty)
        // Closed (or, if the number was reused since by another test, open on another file).
        #expect(kept.allSatisfy { !Self.isOpen($0, on: file.path) })
        #expect(FilesOpenedByBuild.current == nil)
        // Outside collect the build checks paths: a read opens its own descriptor.
        try request.buildPostBody()
        #expect(FilesOpenedByBuild.current?.take(path: file.path, expectedSize: 2_000) == nil)
    }

    @Test("a file changed since it was added fails the build inside collect with the error it fails with outside")
    func changedFileFailsTheSame() throws {
        let (file, request) = try Self.formWithOneFile(count: 4_000, seed: 24)
        defer { file.remove() }
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: file.path))
        let expected = FormDataError.fileChanged(path: file.path, expectedSize: 4_000, actualSize: 10)
        #expect(throws: expected) { try FilesOpenedByBuild.collect { try request.buildPostBody() } }
        #expect(throws: expected) { try request.buildPostBody() }
        try FileManager.default.removeItem(atPath: file.path)
        let outside = #expect(throws: FormDataError.self) { try request.buildPostBody() }
        let inside = #expect(throws: FormDataError.self) { try FilesOpenedByBuild.collect { try request.buildPostBody() } }
        #expect(outside == inside)
        #expect(inside == .fileNotFound(path: file.path))
    }
}

extension FilesOpenedByBuildTests {
    @Test("a build keeps at most maximumFiles files open; the parts after them are checked by their paths")
    func opensAtMostTheMaximum() throws {
        let files = try (0..<(FilesOpenedByBuild.maximumFiles + 4)).map { try ScratchBytes(count: 100 + $0, seed: UInt64(30 + $0)) }
        defer { files.forEach { $0.remove() } }
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/")!)
        for (index, file) in files.enumerated() { try request.addFile(file.path, forKey: "file\(index)") }
        try FilesOpenedByBuild.collect {
            try request.buildPostBody()
            #expect(FilesOpenedByBuild.current?.keptDescriptors.count == FilesOpenedByBuild.maximumFiles)
            #expect(try request.bodySource?.readAll().count == Int(request.bodySource?.length ?? 0))
        }
    }
}
