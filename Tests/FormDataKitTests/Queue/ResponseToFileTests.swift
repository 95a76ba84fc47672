@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
@testable import FormDataKitTesting
import Testing

@testable import FormDataKit

/// ASI's remaining blocks and `downloadDestinationPath`/`temporaryFileDownloadPath`, against a
/// loopback server that answers `GET /bytes/<n>` with n known bytes.
@Suite("Response blocks and response to a file")
struct ResponseToFileTests {
    typealias Support = TransportTestSupport

    static func body(_ count: Int) -> Data { Support.randomData(size: count, seed: 42) }

    static func withServer<T>(_ work: (URL) async throws -> T) async throws -> T {
        let server = try await LoopbackHTTPServer.start(host: "127.0.0.1", port: 0) { request, _ in
            let parts = request.path.split(separator: "/")
            guard parts.count == 2, let count = Int(parts[1]) else { return .text(404, "no") }
            let body = parts[0] == "zeros" ? Data(count: count) : Self.body(count)
            return .init(status: 200, headers: [(name: "Content-Type", value: "application/octet-stream")], body: body)
        }
        let result: Result<T, any Error>
        do { result = .success(try await work(URL(string: "http://127.0.0.1:\(server.port)")!)) } catch { result = .failure(error) }
        await server.stop()
        return try result.get()
    }

    static func scratchDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "fdk-download-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func request(_ url: URL, _ kind: TransportKind) -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.requestMethod = "GET"
        request.transport = kind.transport
        request.timeOutSeconds = Support.patientTimeout
        return request
    }

    @Test("the body goes to the destination, whole, through a temporary file that is gone after", arguments: TransportKind.allCases)
    func downloadToFile(kind: TransportKind) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { base in
            let destination = directory + "/photo.bin"
            try Data("old contents".utf8).write(to: URL(fileURLWithPath: destination))
            let request = Self.request(base.appendingPathComponent("bytes/3000000"), kind)
            request.downloadDestinationPath = destination
            request.temporaryFileDownloadPath = directory + "/photo.bin.download"
            let sizes = Locked<[Int64]>([])
            let received = Locked<UInt64>(0)
            request.downloadSizeIncrementedBlock = { size in sizes.withLock { $0.append(size) } }
            request.bytesReceivedBlock = { size, total in
                received.withLock { $0 += size }
                #expect(total == 3_000_000)
            }
            let error = await Support.blocking { request.startSynchronous() }
            #expect(error == nil)
            #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Self.body(3_000_000))
            #expect(request.responseData == nil)
            #expect(sizes.current == [3_000_000])
            #expect(received.current == 3_000_000)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["photo.bin"])
        }
    }

    @Test("a cancelled download leaves no partial file: the destination keeps what it had, the temporary file is removed")
    func cancelledDownload() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { base in
            let destination = directory + "/big.bin"
            try Data("previous".utf8).write(to: URL(fileURLWithPath: destination))
            let request = Self.request(base.appendingPathComponent("zeros/50000000"), .curl)
            request.downloadDestinationPath = destination
            request.bytesReceivedBlock = { _, _ in request.cancel() }
            let error = await Support.blocking { request.startSynchronous() }
            #expect(error == .cancelled)
            #expect(try String(contentsOfFile: destination, encoding: .utf8) == "previous")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["big.bin"])
        }
    }

    @Test("a destination in a missing directory fails with a typed error naming the path; nothing is left")
    func unwritableDestination() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer { (base) async throws -> Void in
            let request = Self.request(base.appendingPathComponent("bytes/10"), .curl)
            request.downloadDestinationPath = directory + "/missing/out.bin"
            let error = await Support.blocking { request.startSynchronous() }
            guard case .fileManagement(.fileUnwritable(let path, let code))? = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(path.hasPrefix(directory + "/missing/"))
            #expect(code == ENOENT)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test(
        "dataReceivedBlock gets the body in order and responseData stays nil (ASI); headersReceivedBlock after the delegate",
        arguments: TransportKind.allCases)
    func dataAndHeadersBlocks(kind: TransportKind) async throws {
        try await Self.withServer { base in
            let request = Self.request(base.appendingPathComponent("bytes/1000000"), kind)
            let collected = Locked(Data())
            let order = Locked<[String]>([])
            request.dataReceivedBlock = { data in collected.withLock { $0.append(data) } }
            request.headersReceivedBlock = { headers in
                order.withLock { $0.append("block \(headers["Content-Length"] ?? "-")") }
            }
            let delegate = HeadersDelegate(order)
            request.delegate = delegate
            request.startedBlock = { order.withLock { $0.append("started") } }
            request.uploadSizeIncrementedBlock = { size in order.withLock { $0.append("upload size \(size)") } }
            let error = await Support.blocking { request.startSynchronous() }
            #expect(error == nil)
            #expect(collected.current == Self.body(1_000_000))
            #expect(request.responseData == nil)
            #expect(order.current == ["started", "upload size 0", "delegate headers", "block 1000000"])
            _ = delegate
        }
    }
}

final class HeadersDelegate: FormDataRequestDelegate, @unchecked Sendable {
    let order: Locked<[String]>
    init(_ order: Locked<[String]>) { self.order = order }
    func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String]) {
        order.withLock { $0.append("delegate headers") }
    }
}
