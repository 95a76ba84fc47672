import Foundation
import FormDataKit
import FormDataKitTesting
import FormDataKitTestSupport
import Testing

/// URLSessionTransport sends a file body up to `inMemoryFileBodyLimit` from memory, so cancelling
/// it mid-body cannot reach FoundationNetworking's crashing file reader (see `Isolation`).
@Suite("URLSession: file bodies up to the in-memory limit are sent from memory")
struct URLSessionFileBodyTests {
    typealias Support = TransportTestSupport

    static func send(_ request: TransportRequest, with transport: URLSessionTransport) async -> Result<FormDataResponse, FormDataError> {
        await drive(request, on: transport)
    }

    static func fileRequest(_ url: URL, path: String, length: Int) -> TransportRequest {
        TransportRequest(
            url: url, method: "POST", headers: [(name: "Content-Type", value: "application/octet-stream")],
            body: .file(path: path, length: UInt64(length)), timeoutInterval: Support.patientTimeout)
    }

    @Test("from memory and from the file: the same bytes, the exact Content-Length, the caller's file kept")
    func sameBytesEitherWay() async throws {
        let file = try Support.makeFile(size: 3_000_000, seed: 21)
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            for limit: UInt64 in [0, 3_000_000] {
                let transport = URLSessionTransport(inMemoryFileBodyLimit: limit)
                let request = Self.fileRequest(receiver.url("/raw"), path: file.path, length: file.data.count)
                let response = try await Self.send(request, with: transport).get()
                #expect(response.statusCode == 200, "limit \(limit)")
                let received = try #require(receiver.lastRequest)
                #expect(received.bodySHA256 == file.sha256, "limit \(limit)")
                #expect(received.contentLength == file.data.count, "limit \(limit)")
                #expect(received.header("Transfer-Encoding") == nil, "limit \(limit)")
                #expect(FileManager.default.fileExists(atPath: file.path), "limit \(limit)")
            }
        }
    }

    @Test("a missing body file fails with the same error from memory and from the file", arguments: [UInt64(0), 1 << 20])
    func missingFile(limit: UInt64) async throws {
        let missing = NSTemporaryDirectory() + "fdk-missing-\(UUID().uuidString).bin"
        try await Support.withReceiver { receiver in
            let result = await Self.send(
                Self.fileRequest(receiver.url("/raw"), path: missing, length: 1000),
                with: URLSessionTransport(inMemoryFileBodyLimit: limit))
            #expect(
                throws: FormDataError.fileManagement(
                    underlying: .temporaryFileFailed(path: missing, operation: "read body", errno: ENOENT))
            ) { try result.get() }
            #expect(receiver.requests.isEmpty)
        }
    }

    @Test("a body file that changed size is an error, not a wrong body")
    func changedFile() async throws {
        let file = try Support.makeFile(size: 10_000, seed: 5)
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let result = await Self.send(
                Self.fileRequest(receiver.url("/raw"), path: file.path, length: 20_000), with: URLSessionTransport())
            #expect(throws: FormDataError.self) { try result.get() }
            #expect(receiver.requests.isEmpty)
        }
    }

    /// A transport that sends every file body from its file (FoundationNetworking's file reader).
    static let fromFile = URLSessionTransport(inMemoryFileBodyLimit: 0)

    /// Sends a 6 MB file 20 times over `transport`, cancelling each upload at its first progress
    /// callback; each must fail `cancelled` and leave no temp file.
    static func cancelLoop(_ transport: URLSessionTransport) async throws {
        let file = try await Support.blocking { try Support.makeFile(size: 6_000_000, seed: 23) }
        defer { file.remove() }
        var midBody = 0
        try await Support.withReceiver { receiver in
            for round in 1...20 {
                let request = FormDataRequest(url: receiver.url("/delay/2000?sha256=0"))
                request.transport = transport
                request.timeOutSeconds = Support.patientTimeout
                try request.addFile(file.path, forKey: "file")
                try request.buildPostBody()
                let spooled = try #require(request.postBodyFilePath)
                let delegate = RecordingDelegate(onSend: { $0.cancel() })
                request.delegate = delegate
                await Support.blocking { request.startSynchronous() }
                #expect(request.error == .cancelled, "round \(round): \(String(describing: request.error)) \(delegate.log)")
                #expect(!FileManager.default.fileExists(atPath: spooled), "round \(round)")
                if request.totalBytesSent < UInt64(file.data.count) { midBody += 1 }
            }
        }
        print("cancelled mid-body in \(midBody) of 20 rounds")
        #expect(midBody > 0, "no round was cancelled before its body was sent")
    }

    /// Each loop runs in a child. From memory (the default limit) a crash fails the test; from
    /// the file, FoundationNetworking's known crash is expected now and then (a known issue), and
    /// is kept here as the contrast that shows what the limit avoids. To count it:
    /// `FORMDATAKIT_ISOLATED_CASE='cancelMidBody()#fromFile' .build/debug/FormDataKitPackageTests.xctest --testing-library swift-testing --filter /cancelMidBody`
    /// (exit status 132 is the crash).
    @Test("cancelled mid-upload 20 times with a 6 MB file: from memory never a crash (a crash fails); from the file, the known crash")
    func cancelMidBody() async throws {
        try await Isolation.inChildOnly(case: "fromMemory") { try await Self.cancelLoop(URLSessionTransport.shared) }
        try await Isolation.run(case: "fromFile", attempts: 1) { try await Self.cancelLoop(Self.fromFile) }
        #if os(Linux)
        if !Isolation.isChild {
            let outcome = try await Isolation.runChild(test: #function, case: "fromMemory")
            #expect(outcome == .passed, "\(outcome)")
        }
        #endif
    }
}
