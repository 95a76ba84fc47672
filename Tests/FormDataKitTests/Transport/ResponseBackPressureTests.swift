@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
@testable import FormDataKitTesting
import Testing

@testable import FormDataKit

/// Back-pressure on the response side: a response written to a file on a disk slower than the
/// network pauses that transfer only — never a wait on the transport's event thread — and the
/// file is whole once the disk catches up.
@Suite("Response back-pressure")
struct ResponseBackPressureTests {
    typealias Support = TransportTestSupport

    /// Holds every write of a response file until opened, as a stalled disk does: the first write
    /// waits in the file's writer (on the global queue, never the transport's thread).
    final class GatedWriter: ResponseFileWriter, @unchecked Sendable {
        // `@unchecked`: only semaphores, which are thread-safe.
        private let gate = DispatchSemaphore(value: 0)

        func open() { gate.signal() }

        func write(_ data: Data, to file: ResponseDownloadFile) throws(FormDataError) {
            gate.wait()
            gate.signal()  // open for good: the writes after the first go through
            try file.write(data)
        }
    }

    /// A one-shot event with a wait bounded only against a hang (not a measurement).
    final class Event: @unchecked Sendable {
        // `@unchecked`: a semaphore and a lock.
        private let semaphore = DispatchSemaphore(value: 0)
        private let fired = Locked(false)

        func fire() {
            let first = fired.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { semaphore.signal() }
        }

        /// Waits for the event, at most `seconds` (a bound against a hang only).
        func wait(seconds: Double) async -> Bool {
            await Support.blocking { [semaphore] in semaphore.wait(timeout: .now() + seconds) == .success }
        }
    }

    static let bodySize = 24 << 20
    static let body = Support.randomData(size: bodySize, seed: 53)

    static func withServer<T>(_ work: (URL) async throws -> T) async throws -> T {
        let server = try await LoopbackHTTPServer.start(host: "127.0.0.1", port: 0) { request, _ in
            if request.path == "/big" {
                return .init(status: 200, headers: [(name: "Content-Type", value: "application/octet-stream")], body: Self.body)
            }
            return .text(200, "small")
        }
        let result: Result<T, any Error>
        do { result = .success(try await work(URL(string: "http://127.0.0.1:\(server.port)")!)) } catch { result = .failure(error) }
        await server.stop()
        return try result.get()
    }

    /// The kinds whose transport can pause a response (URLSession on Linux cannot: see
    /// ChoosingATransport).
    static var pausingKinds: [TransportKind] { TransportKind.allCases.filter { $0 != .urlSession } }

    static func transport(_ kind: TransportKind) -> any FormDataTransport {
        kind == .curl ? CurlTransport() : kind.transport
    }

    @Test(
        "a stalled disk pauses only its own download: another send on the same transport completes, memory stays bounded, the file is whole after",
        arguments: pausingKinds)
    func stalledDiskPausesOnlyThatTransfer(kind: TransportKind) async throws {
        let directory = NSTemporaryDirectory() + "fdk-backpressure-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let transport = Self.transport(kind)
        try await Self.withServer { base in
            let destination = directory + "/big.bin"
            let writer = GatedWriter()
            let big = FormDataRequest(url: base.appendingPathComponent("big"))
            big.requestMethod = "GET"
            big.transport = transport
            big.timeOutSeconds = Support.patientTimeout  // paused while the disk is stalled: no idle timeout meanwhile
            big.downloadDestinationPath = destination
            big.sending.withLock { $0.settings.responseFileWriter = writer }
            let received = Locked<UInt64>(0)
            let overLimit = Event()
            big.bytesReceivedBlock = { count, _ in
                let total = received.withLock { total -> UInt64 in
                    total += count
                    return total
                }
                if total > UInt64(ResponseReceiving.writeBacklogLimit) { overLimit.fire() }
            }
            let bigDone = Task { await Support.blocking { big.startSynchronous() } }

            // Bounds against a hang only (the events come in milliseconds): a generous 60 s.
            #expect(await overLimit.wait(seconds: 60), "the download never got past the backlog limit")

            // (a) The transport's thread is not blocked: a second send on it completes meanwhile.
            let small = FormDataRequest(url: base.appendingPathComponent("small"))
            small.requestMethod = "GET"
            small.transport = transport
            small.timeOutSeconds = Support.patientTimeout
            let smallFinished = Event()
            let smallError = Locked<FormDataError?>(nil)
            Thread.detachNewThread {
                let error = small.startSynchronous()
                smallError.withLock { $0 = error }
                smallFinished.fire()
            }
            let smallCompleted = await smallFinished.wait(seconds: 60)
            #expect(smallCompleted, "a send on the same transport waited for the stalled download's disk")
            #expect(smallError.current == nil)
            #expect(small.responseString?.hasPrefix("small") == true)
            // Memory stays bounded: the stalled download took at most the limit and a few buffers.
            let takenWhileStalled = received.current
            #expect(takenWhileStalled <= UInt64(ResponseReceiving.writeBacklogLimit + (1 << 20)), "took \(takenWhileStalled) bytes")

            // (b) Once the disk catches up, the download completes with exactly the server's bytes.
            writer.open()
            let downloadError = await bigDone.value
            #expect(downloadError == nil)
            #expect(received.current == UInt64(Self.bodySize))
            let written = try Data(contentsOf: URL(fileURLWithPath: destination))
            #expect(written == Self.body)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(left == ["big.bin"])
            if !smallCompleted { _ = await smallFinished.wait(seconds: 60) }
        }
        if let curl = transport as? CurlTransport { await curl.shutdown() }
    }

    @Test("demand: withheld past the limit, back at half of it (the paused exchange resumes once), given up for good on release")
    func demandRule() {
        let demand = ResponseDemand(limit: 100)
        let resumes = Locked(0)
        let resume: @Sendable () -> Void = { resumes.withLock { $0 += 1 } }
        demand.took(100)
        #expect(!demand.pausesReceiving(resumingWith: resume))  // at the limit, not past it
        demand.took(1)
        #expect(demand.pausesReceiving(resumingWith: resume))
        demand.finished(50)  // 51 outstanding: still above half
        #expect(resumes.current == 0)
        #expect(demand.isWithheld)
        demand.finished(1)  // 50: resumed, once
        #expect(resumes.current == 1)
        #expect(!demand.pausesReceiving(resumingWith: resume))
        demand.finished(50)
        #expect(resumes.current == 1)
        demand.took(200)
        #expect(demand.pausesReceiving(resumingWith: resume))
        demand.release()  // a failed consumer: resumed now, never paused again
        #expect(resumes.current == 2)
        demand.took(500)
        #expect(!demand.pausesReceiving(resumingWith: resume))
    }
}
