import FormDataKitTesting
import Foundation
import Testing

/// No thread or queue per send: 500 sends at once on one `CurlTransport` run in a child process
/// (the receiver's own threads are this process's, not counted) whose thread count is sampled
/// every millisecond while they run.
extension Reliability {
    @Suite("Threads")
    struct ThreadCountTests {
        @Test("500 concurrent sends on one CurlTransport: every one answered, the sending process peaks at 16 threads or fewer")
        func fiveHundredConcurrentSends() async throws {
            let receiver = try await FormReceiver.start()
            let output = try await Subprocess.run([Subprocess.helperPath, "concurrent", "500", receiver.url("/discard").absoluteString])
            await receiver.stop()
            let report = output.report
            #expect(report["ok"] as? Int == 500, "\(report) \(String(decoding: output.stderr, as: UTF8.self))")
            let peak = report["peakThreads"] as? Int ?? -1
            print("500 concurrent sends on one CurlTransport: peak \(peak) threads in the sending process")
            #expect(peak > 0 && peak <= 16, "peak \(peak) threads")
        }
    }
}
