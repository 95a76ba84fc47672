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
@testable import FormDataKitTesting
import Testing

@testable import FormDataKit

/// Issue 53, the file owner: a download's temporary file is created new (``OwnedFile``), so a
/// caller's `temporaryFileDownloadPath` that exists — a planted file, a symbolic link, a device,
/// a FIFO, another download's temporary file — is refused with a typed error naming it, before
/// anything is sent, and left exactly as it was.
@Suite("Download temporary files are created new: an existing temporaryFileDownloadPath is refused")
struct DownloadFileOwnerTests {
    typealias Support = TransportTestSupport

    /// A loopback server answering `GET /bytes/<n>` with n known bytes; a request for
    /// `/held/<n>` waits (on the server's handler thread) until ``release()``.
    final class Server: Sendable {
        let server: LoopbackHTTPServer
        let base: URL
        /// Requests that reached the handler.
        let requests: Locked<Int>
        private let entered: DispatchSemaphore
        private let released: Locked<Bool>
        private let gate: NSCondition

        init() async throws {
            let (requests, entered, released, gate) = (Locked(0), DispatchSemaphore(value: 0), Locked(false), NSCondition())
            (self.requests, self.entered, self.released, self.gate) = (requests, entered, released, gate)
            server = try await LoopbackHTTPServer.start(host: "127.0.0.1", port: 0) { request, _ in
                requests.withLock { $0 += 1 }
                let parts = request.path.split(separator: "/")
                guard parts.count == 2, let count = Int(parts[1]) else { return .text(404, "no") }
                if parts[0] == "held" {
                    entered.signal()
                    gate.lock()
                    while !released.current { gate.wait() }
                    gate.unlock()
                }
                return .init(
                    status: 200, headers: [(name: "Content-Type", value: "application/octet-stream")],
                    body: DownloadFileOwnerTests.body(count))
            }
            base = URL(string: "http://127.0.0.1:\(server.port)")!
        }

        /// Waits until a `/held/` request reached the handler. Bounded only so a broken build
        /// fails instead of hanging: 60 s is far beyond the milliseconds it takes on a busy machine.
        func waitUntilHeld() async -> Bool {
            let entered = entered
            return await Support.blocking { entered.wait(timeout: .now() + 60) == .success }
        }

        /// Lets every held request (and any later one) answer.
        func release() {
            gate.lock()
            released.withLock { $0 = true }
            gate.broadcast()
            gate.unlock()
        }

        func stop() async {
            release()
            await server.stop()
        }
    }

    static func body(_ count: Int) -> Data { Support.randomData(size: count, seed: 53) }

    static func withServer(_ work: (Server) async throws -> Void) async throws {
        let server = try await Server()
        let result: Result<Void, any Error>
        do { result = .success(try await work(server)) } catch { result = .failure(error) }
        await server.stop()
        try result.get()
    }

    static func scratchDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "fdk-owner-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func download(_ url: URL, _ kind: TransportKind, to destination: String, through temporary: String?) -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.requestMethod = "GET"
        request.transport = kind.transport
        request.timeOutSeconds = Support.patientTimeout
        request.downloadDestinationPath = destination
        request.temporaryFileDownloadPath = temporary
        return request
    }

    /// The error a send fails with when its temporary path exists.
    static func refused(_ path: String) -> FormDataError { .fileManagement(underlying: .fileExists(path: path)) }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode : nil
    }

    /// Records the failure the delegate is told of.
    final class FailureDelegate: FormDataRequestDelegate, @unchecked Sendable {
        let failures = Locked<[FormDataError?]>([])
        func requestFailed(_ request: FormDataRequest) { failures.withLock { $0.append(request.error) } }
    }

    @Test(
        "a planted file (mode 0666) at temporaryFileDownloadPath is refused, named, untouched and kept; nothing is sent",
        arguments: TransportKind.allCases)
    func plantedFileRefused(kind: TransportKind) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { (server) async throws -> Void in
            let temporary = directory + "/planted.download"
            try Data("planted by someone else".utf8).write(to: URL(fileURLWithPath: temporary))
            #expect(chmod(temporary, 0o666) == 0)
            let destination = directory + "/out.bin"
            let request = Self.download(server.base.appendingPathComponent("bytes/100000"), kind, to: destination, through: temporary)
            let delegate = FailureDelegate()
            request.delegate = delegate
            let error = await Support.blocking { request.startSynchronous() }
            #expect(error == Self.refused(temporary))
            #expect(error?.asiErrorCode == 8)
            #expect((error.map { $0 as NSError })?.code == 8)
            #expect(delegate.failures.current == [Self.refused(temporary)])
            #expect(String(describing: error).contains(temporary))
            #expect(try String(contentsOfFile: temporary, encoding: .utf8) == "planted by someone else")
            #expect(Self.mode(temporary) == S_IFREG | 0o666)
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(server.requests.current == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["planted.download"])
            _ = delegate
        }
    }

    @Test("a symbolic link at temporaryFileDownloadPath (to a file, or dangling) is refused; the link and its target are untouched")
    func symbolicLinkRefused() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { (server) async throws -> Void in
            let target = directory + "/target.txt"
            try Data("the link's target".utf8).write(to: URL(fileURLWithPath: target))
            let link = directory + "/link.download"
            let dangling = directory + "/dangling.download"
            #expect(symlink(target, link) == 0)
            #expect(symlink(directory + "/would-be-created", dangling) == 0)
            for temporary in [link, dangling] {
                let request = Self.download(
                    server.base.appendingPathComponent("bytes/1000"), .curl, to: directory + "/out.bin", through: temporary)
                let error = await Support.blocking { request.startSynchronous() }
                #expect(error == Self.refused(temporary))
                #expect(Self.mode(temporary).map { $0 & S_IFMT } == S_IFLNK)
            }
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "the link's target")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
                    "dangling.download", "link.download", "target.txt",
                ])
            #expect(server.requests.current == 0)
        }
    }

    @Test("a character device at temporaryFileDownloadPath is refused and neither written to nor unlinked (needs mknod: root)")
    func characterDeviceRefused() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let device = directory + "/null.download"
        // A copy of /dev/null (1, 3). Without the privilege to make one (not root, or no
        // CAP_MKNOD), the device case cannot be set up here: the FIFO and planted-file tests cover
        // the same refusal.
        #if os(Linux)
        let null = dev_t((1 << 8) | 3)  // Linux's encoding of (major 1, minor 3)
        #else
        let null = dev_t((1 << 24) | 3)
        #endif
        guard mknod(device, S_IFCHR | 0o666, null) == 0 else {
            print("characterDeviceRefused: skipped, mknod failed: \(String(cString: strerror(errno)))")
            return
        }
        try await Self.withServer { (server) async throws -> Void in
            let request = Self.download(
                server.base.appendingPathComponent("bytes/1000"), .curl, to: directory + "/out.bin", through: device)
            let error = await Support.blocking { request.startSynchronous() }
            #expect(error == Self.refused(device))
            #expect(Self.mode(device).map { $0 & S_IFMT } == S_IFCHR)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["null.download"])
            #expect(server.requests.current == 0)
        }
    }

    @Test(
        "a FIFO at temporaryFileDownloadPath does not hang the send: it fails at once with the typed error; the FIFO stays",
        arguments: TransportKind.allCases)
    func fifoRefusedWithoutHanging(kind: TransportKind) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/pipe.download"
        #expect(mkfifo(fifo, 0o600) == 0)
        try await Self.withServer { (server) async throws -> Void in
            let request = Self.download(server.base.appendingPathComponent("bytes/1000"), kind, to: directory + "/out.bin", through: fifo)
            let finished = DispatchSemaphore(value: 0)
            let outcome = Locked<FormDataError??>(nil)
            Thread.detachNewThread {
                let error = request.startSynchronous()
                outcome.withLock { $0 = .some(error) }
                finished.signal()
            }
            // The completion event, bounded only so the old code (a blocking open that waits for
            // a reader for ever) fails instead of hanging the suite: 60 s is thousands of times
            // what a refusal takes on a busy machine.
            let completed = await Support.blocking { finished.wait(timeout: .now() + 60) == .success }
            #expect(completed, "the send hung on the FIFO")
            if !completed {
                // Free the thread stuck in open(2) so the process can go on.
                _ = await Support.blocking { SpecialFiles.drainWriter(ofFIFO: fifo) }
                _ = await Support.blocking { finished.wait(timeout: .now() + 60) }
            }
            #expect(outcome.current == .some(Self.refused(fifo)))
            #expect(Self.mode(fifo).map { $0 & S_IFMT } == S_IFIFO)
            #expect(server.requests.current == 0)
        }
    }

    @Test(
        "two downloads given the same temporaryFileDownloadPath: the second is refused, the first completes whole",
        arguments: TransportKind.allCases)
    func concurrentDownloadsShareNoFile(kind: TransportKind) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { (server) async throws -> Void in
            let temporary = directory + "/shared.download"
            let destination = directory + "/out.bin"
            let first = Self.download(server.base.appendingPathComponent("held/3000000"), kind, to: destination, through: temporary)
            let second = Self.download(server.base.appendingPathComponent("bytes/2000000"), kind, to: destination, through: temporary)
            async let firstError = Support.blocking { first.startSynchronous() }
            // The first has made its temporary file before it sent anything: once its request is
            // at the server, the path is taken.
            #expect(await server.waitUntilHeld())
            #expect(FileManager.default.fileExists(atPath: temporary))
            let secondError = await Support.blocking { second.startSynchronous() }
            server.release()
            #expect(secondError == Self.refused(temporary))
            #expect(await firstError == nil)
            #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Self.body(3_000_000))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["out.bin"])
            #expect(server.requests.current == 1)
        }
    }

    @Test(
        "a file put in place of the temporary file mid-download is neither moved to the destination nor removed",
        arguments: TransportKind.allCases)
    func replacedTemporaryFileIsLeftAlone(kind: TransportKind) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { (server) async throws -> Void in
            let temporary = directory + "/body.download"
            let destination = directory + "/out.bin"
            try Data("previous".utf8).write(to: URL(fileURLWithPath: destination))
            let request = Self.download(server.base.appendingPathComponent("held/100000"), kind, to: destination, through: temporary)
            async let error = Support.blocking { request.startSynchronous() }
            #expect(await server.waitUntilHeld())
            #expect(rename(temporary, directory + "/moved-away") == 0)
            try Data("someone else's".utf8).write(to: URL(fileURLWithPath: temporary))
            server.release()
            #expect(await error == .fileManagement(underlying: .fileUnwritable(path: temporary, errno: ENOENT)))
            #expect(try String(contentsOfFile: destination, encoding: .utf8) == "previous")
            #expect(try String(contentsOfFile: temporary, encoding: .utf8) == "someone else's")
        }
    }

    @Test(
        "no temporaryFileDownloadPath: the hidden sibling is created new, moved into place, and removed on cancel",
        arguments: TransportKind.allCases)
    func siblingKeepsWorking(kind: TransportKind) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { (server) async throws -> Void in
            let destination = directory + "/out.bin"
            let request = Self.download(server.base.appendingPathComponent("bytes/2000000"), kind, to: destination, through: nil)
            let error = await Support.blocking { request.startSynchronous() }
            #expect(error == nil)
            #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Self.body(2_000_000))
            #expect(Self.mode(destination) == S_IFREG | 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["out.bin"])

            try Data("previous".utf8).write(to: URL(fileURLWithPath: destination))
            // Cancelled while the server holds its answer (the hidden sibling exists by then): an
            // event, not a race between a progress callback and a fast loopback download.
            let cancelled = Self.download(server.base.appendingPathComponent("held/20000000"), kind, to: destination, through: nil)
            async let cancelError = Support.blocking { cancelled.startSynchronous() }
            #expect(await server.waitUntilHeld())
            cancelled.cancel()
            #expect(await cancelError == .cancelled)
            server.release()
            #expect(try String(contentsOfFile: destination, encoding: .utf8) == "previous")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["out.bin"])
        }
    }
}
