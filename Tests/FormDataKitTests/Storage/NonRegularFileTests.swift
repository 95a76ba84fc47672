@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import CFileSpace
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting
import Testing
@testable import FormDataKit

/// A file part must be a regular file (or a link to one): a FIFO blocks whoever opens it, a
/// device never ends, a socket cannot be opened, a `/proc` file says size 0 and has content.
@Suite("File parts are regular files: FIFO, device, socket and /proc files are typed errors naming the path")
struct NonRegularFileTests {
    @Test("addFile, setFile and appendPostDataFromFile refuse each at once; nothing is added")
    func refusedWhenAdded() throws {
        let special = try SpecialFiles()
        for (path, kind) in special.all {
            let expected = FormDataError.notARegularFile(path: path, kind: kind)
            let request = FormDataRequest(url: anyURL)
            #expect(throws: expected) { try request.addFile(path, forKey: "f") }
            #expect(throws: expected) { try request.setFile(path, withFileName: "x", andContentType: nil, forKey: "f") }
            #expect(throws: expected) { try request.appendPostDataFromFile(path) }
            #expect(request.form.isEmpty)
            try request.buildPostBody()
            #expect(request.postLength == 0)
            #expect(expected.asiErrorCode == 6)
            #expect(
                expected.description
                    == "The path \(path) is a \(kind), not a regular file: only regular files (or links to one) can be sent")
        }
    }

    @Test("the file system check remembers only disk devices: kernel files stay refused after disk files, and again and again")
    func kernelFilesStayRefused() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let regular = try scratch.write("plain.txt", "plain")
        for _ in 0..<3 {
            let request = FormDataRequest(url: anyURL)
            try request.addFile(regular, forKey: "ok")
            #expect(throws: FormDataError.notARegularFile(path: "/proc/self/status", kind: "procfs file")) {
                try request.addFile("/proc/self/status", forKey: "f")
            }
            let opened = try OpenedFileRange(FileRange(path: regular, offset: 0, length: 5, expectedFileSize: 5))
            #expect(opened.remaining == 5)
        }
    }

    @Test("kernel file systems have anonymous devices (major 0), whose file system is checked every time, never remembered")
    func kernelFileSystemsHaveAnonymousDevices() {
        for path in ["/proc/self/status", "/sys/kernel", "/dev/shm"] {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            #expect(cfilespace_device_major(UInt64(info.st_dev)) == 0, "\(path)")
        }
    }

    @Test("a link to a regular file is a regular file")
    func linkToRegularFile() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let target = try scratch.write("real.txt", "content")
        let link = scratch.path + "/link.txt"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let request = FormDataRequest(url: anyURL)
        try request.addFile(link, forKey: "f")
        let raw = FormDataRequest(url: anyURL)
        try raw.appendPostDataFromFile(link)
        try raw.buildPostBody()
        #expect(raw.postLength == 7)
    }

    @Test("postBodyFilePath set to one: the build throws it (a setter cannot) and a send fails with it, connecting nowhere")
    func postBodyFilePathRefusedAtBuild() async throws {
        let special = try SpecialFiles()
        for (path, kind) in special.all {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/never")!)
            request.postBodyFilePath = path
            #expect(request.postBodyFilePath == path)  // reads back as set, as in ASI
            #expect(throws: FormDataError.notARegularFile(path: path, kind: kind)) { try request.buildPostBody() }
            await #expect(throws: FormDataError.internalErrorWhileBuilding(underlying: .notARegularFile(path: path, kind: kind))) {
                try await request.start()
            }
        }
    }

    @Test("a FIFO put in place of an added file fails the build, naming it")
    func swappedBeforeBuild() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let path = try scratch.write("photo.jpg", "not yet a pipe")
        let request = FormDataRequest(url: anyURL)
        try request.addFile(path, forKey: "photo")
        try SpecialFiles.replaceWithFIFO(path)
        #expect(throws: FormDataError.notARegularFile(path: path, kind: "FIFO")) { try request.buildPostBody() }
    }

    @Test("an empty file swapped for a link to a /proc file after addFile: the send fails naming it (the read checks the opened file)")
    func procFileSwappedBeforeSend() async throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        // Empty, as /proc files say they are: the build's size check cannot tell them apart.
        let path = try scratch.write("empty.txt", "")
        try await TransportTestSupport.withReceiver { receiver in
            // To a receiver: the body is read ahead while the exchange connects, so a server that
            // refuses the connection could answer first.
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = CurlTransport.shared
            try request.addFile(path, forKey: "notes")
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/proc/self/status")
            // The build checks size and type only (the empty size matches); reading the built body
            // opens the file and refuses it, exactly.
            try request.buildPostBody()
            let built = try #require(request.state.withLock { $0.built })
            #expect(throws: FormDataError.notARegularFile(path: path, kind: "procfs file")) { try built.source.readAll() }
            let error = await TransportTestSupport.blocking { request.startSynchronous() }
            #expect("\(String(describing: error))".contains("procfs file"), "\(String(describing: error))")
            #expect("\(String(describing: error))".contains(path), "\(String(describing: error))")
        }
    }

    @Test("when a body is read, each is refused without blocking: the FIFO is opened non-blocking")
    func refusedWhenRead() throws {
        let special = try SpecialFiles()
        for (path, kind) in special.all {
            let source = BodySource(segments: [BodySegment(.file(FileRange(path: path, length: 10, expectedFileSize: 10)))])
            #expect(throws: FormDataError.notARegularFile(path: path, kind: kind)) { try source.readAll() }
        }
    }
}
