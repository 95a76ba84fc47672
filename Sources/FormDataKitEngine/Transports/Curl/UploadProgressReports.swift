import FormDataKitBody
import FormDataKitWire
import Foundation

/// When a curl transfer tells its send that body bytes went out. libcurl calls its progress
/// function after every round of the transfer (every few dozen kilobytes on a fast connection),
/// and every report is an event of the send driver; so a report waits until ``interval`` has
/// passed since the last one — except the first, and the one that completes the body, which go
/// at once — and what is left unreported when the exchange ends goes then. The send's idle clock
/// and its progress see the bytes at most ``interval`` late; progress still ends at exactly the
/// body length.
struct UploadProgressReports {
    /// At most one report per this many nanoseconds (10 ms), but the first and the last.
    static let interval: UInt64 = 10_000_000

    /// The body's length in bytes.
    let bodyLength: Int64
    /// Bytes of the body on the wire, as libcurl last said.
    private(set) var onWire: Int64 = 0
    private var reported: Int64 = 0
    private var reportedAt: UInt64 = 0

    init(bodyLength: Int64) { self.bodyLength = bodyLength }

    /// libcurl says `uploaded` bytes of the body are on the wire at `now` (monotonic
    /// nanoseconds): the report to make, if one is due — the bytes on the wire and how many
    /// more than the last report said. `now` is read only when bytes went out: libcurl calls its
    /// progress function on every round of every transfer, nearly always with nothing new.
    mutating func sent(_ uploaded: Int64, now: @autoclosure () -> UInt64) -> (total: Int64, increment: Int64)? {
        guard uploaded > onWire else { return nil }
        onWire = uploaded
        let now = now()
        guard reported == 0 || uploaded >= bodyLength || now &- reportedAt >= Self.interval else { return nil }
        return take(now: now)
    }

    /// The exchange ends: the report of what is on the wire but not yet reported, if anything is.
    mutating func ended(now: UInt64) -> (total: Int64, increment: Int64)? {
        onWire > reported ? take(now: now) : nil
    }

    private mutating func take(now: UInt64) -> (total: Int64, increment: Int64) {
        defer {
            reported = onWire
            reportedAt = now
        }
        return (onWire, onWire - reported)
    }
}
