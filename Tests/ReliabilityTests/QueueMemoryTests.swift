import FormDataKitTesting
import Foundation
import Testing

/// A queue of 10,000 file uploads holds no body before a request starts: the child process's
/// resident set once all are queued and at its peak over the run (4 at a time on one
/// `CurlTransport`), against a receiver that discards the bodies.
///
/// CI: 10,000 × 4 KiB files (light on a machine shared with the other suites' receivers);
/// `FORMDATAKIT_LONG=1`: 10,000 × 1 MiB (10 GiB over loopback).
extension Reliability {
    @Suite("Queue memory")
    struct QueueMemoryTests {
        @Test("10,000 queued uploads: no body held or spooled while queued; peak RSS at most 64 MiB; progress exactly 1.0")
        func tenThousandQueued() async throws {
            let sizeKiB = longRun ? 1024 : 4
            let receiver = try await FormReceiver.start()
            let output = try await Subprocess.run([
                Subprocess.helperPath, "queue", "10000", "\(sizeKiB)", receiver.url("/discard").absoluteString,
            ])
            await receiver.stop()
            let report = output.report
            print("NetworkQueue, 10,000 × \(sizeKiB) KiB: \(report)")
            #expect(report["requestsCountAfter"] as? Int == 0, "\(report) \(String(decoding: output.stderr, as: UTF8.self))")
            #expect(report["filesWhileQueued"] as? Int == 0)
            #expect(report["fraction"] as? Double == 1.0)
            #expect((report["uploadedBytes"] as? Int).map { $0 > 10_000 * sizeKiB * 1024 } == true)
            let peak = report["peakRSSKiB"] as? Int ?? -1
            #expect(peak > 0 && peak <= 64 * 1024, "peak \(peak) KiB")
        }
    }
}
