@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Testing
@testable import FormDataKit

/// When a caller driving the curl loop spins before it sleeps for an answer (``CurlSpinWait``),
/// as a value: no clock, no socket.
@Suite("CurlTransport: spinning before sleeping for an answer")
struct CurlSpinWaitTests {
    @Test("a limit of 0 never spins")
    func never() {
        var policy = CurlSpinWait(limit: 0)
        for _ in 0..<5 {
            #expect(policy.nextLimit() == 0)
            policy.record(answered: true)
        }
    }

    @Test("while spins find answers, every wait spins for the whole limit")
    func answeredSpins() {
        var policy = CurlSpinWait(limit: 200_000)
        for _ in 0..<100 {
            #expect(policy.nextLimit() == 200_000)
            policy.record(answered: true)
        }
    }

    @Test("spins that find nothing make the next 1, 2, 4 … 64 waits sleep at once; an answered spin starts over")
    func backOff() {
        var policy = CurlSpinWait(limit: 50_000)
        /// The waits that sleep at once before the next spin, after a spin that found nothing.
        func skippedAfterMiss() -> Int {
            policy.record(answered: false)
            var skipped = 0
            while policy.nextLimit() == 0 { skipped += 1 }
            return skipped
        }
        #expect(policy.nextLimit() == 50_000)
        #expect((0..<8).map { _ in skippedAfterMiss() } == [1, 2, 4, 8, 16, 32, 64, 64])
        policy.record(answered: true)
        #expect(policy.nextLimit() == 50_000)
        #expect(skippedAfterMiss() == 1)
    }

    @Test("the configured interval in nanoseconds: at most a second; none for 0, negative, NaN or one processor")
    func configuredInterval() {
        #expect(CurlTransport.Configuration().synchronousSpinInterval == 0.0002)
        #expect(CurlTransport.nanoseconds(spinning: 0.0002, processors: 2) == 200_000)
        #expect(CurlTransport.nanoseconds(spinning: 5, processors: 2) == 1_000_000_000)
        #expect(CurlTransport.nanoseconds(spinning: 0, processors: 2) == 0)
        #expect(CurlTransport.nanoseconds(spinning: -1, processors: 2) == 0)
        #expect(CurlTransport.nanoseconds(spinning: .nan, processors: 2) == 0)
        #expect(CurlTransport.nanoseconds(spinning: .infinity, processors: 2) == 0)
        #expect(CurlTransport.nanoseconds(spinning: 0.0002, processors: 1) == 0)
    }
}
