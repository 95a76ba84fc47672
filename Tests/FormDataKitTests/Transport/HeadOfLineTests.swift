import Foundation
import FormDataKit
import FormDataKitTestSupport
import FormDataKitTesting
import Testing

@Suite("No request waits for another: a stalled and a cancelled upload beside 20 small ones")
struct HeadOfLineTests {
    typealias Support = TransportTestSupport

    /// The streaming transports, each a fresh instance. (URLSession on Linux cannot pass: see
    /// the transports article's table (ChoosingATransport).)
    typealias Kind = StreamingTransportKind

    @Test(
        "while one upload is stalled by its server and another is cancelled mid-body, 20 small uploads finish while it is still stalled",
        arguments: Kind.allCases)
    func smallUploadsAreNotHeldUp(kind: Kind) async throws {
        // AsyncHTTPClient sends run on the process's Swift concurrency pool (two threads here):
        // beside the other suites' work they waited 14-18 s for it, stalled upload or not. Its
        // case runs in a child process of its own, so it measures the transport; curl's sends
        // run on the transport's own thread and are measured here, under the whole suite's load.
        try await Isolation.run(case: kind.rawValue, isolate: kind == .asyncHTTPClient) {
            let big = try TransportMatrixTests.sparseFile(size: 32 << 20)
            defer { big.remove() }
            let server = try await EdgeServer()
            defer { server.stop() }
            let ahc = kind == .asyncHTTPClient ? try Support.newAsyncHTTPClient() : nil
            let transport: any FormDataTransport = ahc?.transport ?? CurlTransport()

            let stalled = try TransportMatrixTests.formRequest(server.url(1, "/stall"), file: big.path, transport: transport)
            // Its idle timeout must not end the stall while the small uploads run, however slow a
            // loaded machine makes them (the server holds it 60 s at most).
            stalled.timeOutSeconds = 50
            stalled.startAsynchronous()
            let cancelled = try TransportMatrixTests.formRequest(server.url(1, "/stall"), file: big.path, transport: transport)
            let canceller = RecordingDelegate(onSend: { $0.cancel() })  // the delegate is held weakly
            cancelled.delegate = canceller
            await Support.blocking { cancelled.startSynchronous() }
            #expect(cancelled.error == .cancelled)
            // The stalled upload has sent what the socket buffers take and is waiting. (Milliseconds
            // on an idle machine; the 30 s bound only fails a broken build instead of hanging.)
            let deadline = Date().addingTimeInterval(30)
            while stalled.totalBytesSent == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(stalled.totalBytesSent > 0)

            let durations = try await withThrowingTaskGroup(of: Double.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        let request = FormDataRequest(url: server.url(1, "/upload"))
                        request.transport = transport
                        request.timeOutSeconds = Support.patientTimeout
                        request.setPostValue("small \(index)", forKey: "n")
                        // Timed on a thread of its own, around the blocking send: the figure is the
                        // transport's, not the wait of this task for a concurrency-pool thread.
                        let (seconds, status) = await Support.blocking { () -> (Double, Int) in
                            let start = Date()
                            request.startSynchronous()
                            return (Date().timeIntervalSince(start), request.responseStatusCode)
                        }
                        #expect(status == 200, "\(String(describing: request.error))")
                        return seconds
                    }
                }
                return try await group.reduce(into: [Double]()) { $0.append($1) }
            }
            #expect(durations.count == 20)
            // Not held by the stalled upload: every one finished while it was still stalled (one
            // held behind it could only go on once it ended, by its 50 s timeout or the cancel below).
            #expect(stalled.isExecuting && stalled.error == nil, "the stalled upload ended: \(String(describing: stalled.error))")
            // Nor slowed by it: this was "under 2 s each", which a machine whose cores were busy
            // with other builds broke; ten times that still tells a transport that serves the
            // small ones only between the stalled one's waits (a round per idle-timeout check).
            #expect(durations.allSatisfy { $0 < 20 }, "durations: \(durations.sorted())")
            stalled.cancel()
            // The cancel is taken on the transport's next round: milliseconds; 30 s only bounds a
            // broken build.
            let stallDeadline = Date().addingTimeInterval(30)
            while stalled.error == nil && Date() < stallDeadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(stalled.error == .cancelled)
            try await ahc?.shutdown()
        }
    }
}
