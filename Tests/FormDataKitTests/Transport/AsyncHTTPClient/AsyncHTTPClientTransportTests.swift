#if AsyncHTTPClient
import Foundation
import FormDataKit
import FormDataKitAsyncHTTPClient
import FormDataKitTesting
import FormDataKitTestSupport
import Testing

/// A transport that records the body kind of every request, then hands it to `inner`.
final class RecordingTransport: FormDataTransport, @unchecked Sendable {
    // `@unchecked`: `bodies` is only touched under its lock.
    let inner: any FormDataTransport
    private let bodies = Locked<[TransportRequest.Body]>([])

    init(_ inner: any FormDataTransport) { self.inner = inner }

    var acceptedBodyForms: TransportBodyForms { inner.acceptedBodyForms }
    var sentBodies: [TransportRequest.Body] { bodies.current }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        bodies.withLock { $0.append(request.body) }
        return inner.start(request, observer: observer)
    }
}

@Suite("AsyncHTTPClient transport: streaming without a spool")
struct AsyncHTTPClientTransportTests {
    typealias Support = TransportTestSupport

    /// Peak resident memory of this process so far (VmHWM), in MiB; nil where /proc is absent.
    static func peakRSSMiB() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kib / 1024
    }

    /// Writes `size` pseudo-random bytes to a new file in 1 MiB blocks (bounded memory).
    static func writeLargeFile(size: Int, seed: UInt64, in directory: String, name: String) throws -> String {
        let path = directory + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var left = size
        var block = seed
        while left > 0 {
            let count = min(left, 1 << 20)
            try handle.write(contentsOf: Support.randomData(size: count, seed: block))
            block &+= 1
            left -= count
        }
        return path
    }

    @Test("a multipart body with files is streamed from its parts: no temp file, exact Content-Length, same bytes")
    func streamsWithoutSpool() async throws {
        // FDK_AHC_UPLOAD_MIB=1024 runs the 1 GiB upload; the default keeps CI fast.
        let mebibytes = ProcessInfo.processInfo.environment["FDK_AHC_UPLOAD_MIB"].flatMap(Int.init) ?? 3
        let total = mebibytes << 20
        let scratch = try Support.makeFile(size: 1, name: "unused")
        defer { scratch.remove() }
        let sizes = [total / 2, total / 3, total - total / 2 - total / 3]
        let directory = scratch.directory
        let paths = try await Support.blocking {
            try sizes.enumerated().map { index, size in
                try Self.writeLargeFile(size: size, seed: UInt64(index + 1) << 32, in: directory, name: "part\(index).bin")
            }
        }
        let transport = RecordingTransport(AsyncHTTPClientTransport.shared)
        let hashBody = mebibytes <= 16
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url(hashBody ? "/discard?sha256=1" : "/discard"))
            request.transport = transport
            request.timeOutSeconds = 60
            for index in 0..<10 { request.addPostValue("value \(index) ✓", forKey: "field\(index)") }
            for (index, path) in paths.enumerated() { try request.addFile(path, forKey: "file\(index)") }
            try request.buildPostBody()
            #expect(!request.isPostBodySpooled)
            #expect(request.compressedPostBodyFilePath == nil)
            let source = try #require(request.bodySource)
            // Hashed on a plain thread: a debug-build SHA-256 of many MiB must not hold a
            // cooperative thread the receiver needs.
            let expectedHash: String? =
                hashBody
                ? try await Support.blocking { () throws -> String in
                    var hash = SHA256()
                    let reader = source.makeReader()
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                    defer { buffer.deallocate() }
                    while true {
                        let count = try reader.read(into: buffer)
                        if count == 0 { break }
                        hash.update(bytes: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    }
                    return hash.hexDigest
                } : nil
            let response = try await request.start()
            #expect(response.statusCode == 200)
            guard case .source(let sent)? = transport.sentBodies.first else {
                Issue.record("expected a streamed BodySource, got \(transport.sentBodies)")
                return
            }
            #expect(sent == source)
            let received = try #require(receiver.lastRequest)
            #expect(received.contentLength == Int(source.length))
            #expect(received.bodyBytes == Int(source.length))
            #expect(received.header("Transfer-Encoding") == nil)
            if let expectedHash { #expect(received.bodySHA256 == expectedHash) }
            #expect(request.uploadProgress.fractionCompleted == 1.0)
            #expect(request.totalBytesSent == source.length)
            let peak = Self.peakRSSMiB().map { String(format: "%.1f MiB", $0) } ?? "unknown"
            print(
                "AsyncHTTPClient streamed \(source.length) bytes (\(mebibytes) MiB of files + 10 fields), no temp file; test process peak RSS \(peak)"
            )
        }
    }

    @Test("a file that changes size after the build fails the send with fileChanged; no wrong length is sent")
    func fileChangedMidSend() async throws {
        let file = try Support.makeFile(size: 3_000_000, seed: 31)
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = AsyncHTTPClientTransport.shared
            try request.addFile(file.path, forKey: "file")
            try request.buildPostBody()
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.path))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("grown".utf8))
            try handle.close()
            let delegate = RecordingDelegate()
            request.delegate = delegate
            await #expect(
                throws: FormDataError.internalErrorWhileBuilding(
                    underlying: .fileChanged(
                        path: file.path, expectedSize: 3_000_000, actualSize: 3_000_005))
            ) {
                try await request.start()
            }
            #expect(delegate.log.last == "failed")
            // The receiver saw no complete request with a wrong body.
            #expect(receiver.requests.allSatisfy { $0.contentLength == $0.bodyBytes })
        }
    }

    @Test("the process-wide default transport is what a request uses unless it sets its own")
    func defaultTransport() {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/x")!)
        #if os(Linux)
        // libcurl is on every Linux machine that runs Swift (FoundationNetworking needs it).
        #expect(CurlTransport.isAvailable, "\(CurlTransport.unavailableReason ?? "")")
        #expect(request.transport is CurlTransport)
        #expect(request.transport.streamsBodySource)
        #else
        #expect(request.transport is URLSessionTransport)
        #endif
        request.transport = AsyncHTTPClientTransport.shared
        #expect(request.transport is AsyncHTTPClientTransport)
        #expect(request.transport.streamsBodySource)
        #expect(!URLSessionTransport.shared.streamsBodySource)
    }

    @Test("the build is the same whatever the transport; only a send through URLSession (or postBodyFilePath) spools")
    func buildIndependentOfTransport() throws {
        let file = try Support.makeFile(size: 10_000, seed: 43)
        defer { file.remove() }
        func built(_ transport: any FormDataTransport) throws -> FormDataRequest {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1/x")!)
            request.transport = transport
            request.multipartBoundary = "fixed-boundary-for-the-comparison"
            request.shouldLogDebugBody = true
            request.setPostValue("v", forKey: "k")
            try request.addFile(file.path, forKey: "f")
            try request.buildPostBody()
            return request
        }
        let viaURLSession = try built(URLSessionTransport.shared)
        let viaAHC = try built(AsyncHTTPClientTransport.shared)
        let viaCurl = try built(CurlTransport.shared)
        for request in [viaURLSession, viaAHC, viaCurl] {
            #expect(!request.isPostBodySpooled)
            #expect(request.requestHeaders == viaURLSession.requestHeaders)
            #expect(request.postLength == viaURLSession.postLength)
            #expect(request.debugBodyString == viaURLSession.debugBodyString)
            #expect(request.bodySource == viaURLSession.bodySource)
        }
        // ASI code reads postBodyFilePath: the spool is made then, for any transport.
        let spooled = try #require(viaAHC.postBodyFilePath)
        #expect(FileManager.default.fileExists(atPath: spooled))
        #expect(try Data(contentsOf: URL(fileURLWithPath: spooled)) == viaAHC.bodySource?.readAll())
        viaAHC.setPostValue("w", forKey: "k")  // stale: the spool goes with the body
        #expect(!FileManager.default.fileExists(atPath: spooled))
    }

    @Test("URLSessionTransport given a BodySource by hand spools it and removes the spool")
    func urlSessionTakesBodySource() async throws {
        // In a child process of its own: FoundationNetworking's sends and this test's receiver
        // (on the cooperative pool) are held up by whatever else the process runs (alone it takes
        // ~1 s; beside the other suites it timed out), and no test may depend on another's timing.
        try await Isolation.run(case: "urlsession") {
            let file = try Support.makeFile(size: 100_000, seed: 41)
            defer { file.remove() }
            try await Support.withReceiver { receiver in
                let request = FormDataRequest(url: receiver.url("/upload"))
                request.transport = AsyncHTTPClientTransport.shared
                try request.addFile(file.path, forKey: "file")
                try request.buildPostBody()
                let source = try #require(request.bodySource)
                let headers = [(name: "Content-Type", value: try #require(request.requestHeaders["Content-Type"]))]
                let sent = TransportRequest(
                    url: receiver.url("/upload"), method: "POST", headers: headers,
                    body: .source(source), timeoutInterval: 10)
                // Its own session: no other suite's cancelled or stalled uploads share it.
                let transport = URLSessionTransport()
                let result = await drive(sent, on: transport)
                #expect(try result.get().statusCode == 200)
                #expect(receiver.lastRequest?.form?.file("file")?.sha256 == file.sha256)
                #expect(receiver.lastRequest?.contentLength == Int(source.length))
            }
        }
    }
}
#endif
