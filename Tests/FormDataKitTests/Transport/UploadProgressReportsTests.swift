@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Testing
@testable import FormDataKit

/// When the curl transport reports body bytes on the wire: the first report and the one that
/// completes the body at once, others at most every 10 ms, the rest when the exchange ends —
/// progress still ends at exactly the body length. A pure value, tested with made-up times.
@Suite("Curl upload progress reports")
struct UploadProgressReportsTests {
    static let millisecond: UInt64 = 1_000_000

    @Test("the first report goes at once; later ones wait for 10 ms since the last; the one completing the body goes at once")
    func throttled() {
        var reports = UploadProgressReports(bodyLength: 100_000)
        let start: UInt64 = 5_000 * Self.millisecond
        #expect(reports.sent(16_384, now: start)! == (16_384, 16_384))
        #expect(reports.sent(32_768, now: start + 3 * Self.millisecond) == nil)
        #expect(reports.sent(49_152, now: start + 9 * Self.millisecond) == nil)
        // 10 ms after the last report: everything since it, in one increment.
        #expect(reports.sent(65_536, now: start + 10 * Self.millisecond)! == (65_536, 49_152))
        #expect(reports.sent(81_920, now: start + 11 * Self.millisecond) == nil)
        #expect(reports.sent(100_000, now: start + 12 * Self.millisecond)! == (100_000, 34_464))
        #expect(reports.ended(now: start + 13 * Self.millisecond) == nil)  // nothing left to say
    }

    @Test("what is on the wire but unreported when the exchange ends is reported then; no report without new bytes")
    func endedFlushes() {
        var reports = UploadProgressReports(bodyLength: 1 << 20)
        #expect(reports.sent(0, now: 0) == nil)
        #expect(reports.sent(65_536, now: 1)! == (65_536, 65_536))
        #expect(reports.sent(65_536, now: 2 * Self.millisecond) == nil)  // the same count again
        #expect(reports.sent(131_072, now: 5 * Self.millisecond) == nil)  // too soon after the last
        #expect(reports.ended(now: 6 * Self.millisecond)! == (131_072, 65_536))
        #expect(reports.ended(now: 7 * Self.millisecond) == nil)
    }

    @Test("a count lower than one already seen (libcurl rewinding to send again) is not a report")
    func rewindIgnored() {
        var reports = UploadProgressReports(bodyLength: 200_000)
        #expect(reports.sent(150_000, now: 0)! == (150_000, 150_000))
        #expect(reports.sent(50_000, now: 50 * Self.millisecond) == nil)
        #expect(reports.sent(200_000, now: 51 * Self.millisecond)! == (200_000, 50_000))
    }
}

/// Tuples compare element-wise; `#expect` needs a Bool, and an optional tuple is not Equatable.
private func == (lhs: (total: Int64, increment: Int64), rhs: (Int64, Int64)) -> Bool {
    lhs.total == rhs.0 && lhs.increment == rhs.1
}
