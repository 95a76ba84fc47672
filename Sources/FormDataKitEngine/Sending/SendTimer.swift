import FormDataKitBody
import FormDataKitWire
import Foundation

/// The process's one timer for sends: every send's idle clock is a deadline here, run on one
/// serial queue. A finished send cancels its deadline.
enum SendTimer {
    /// A scheduled deadline, to cancel it.
    struct Token: @unchecked Sendable {
        // `@unchecked`: `DispatchWorkItem.cancel()` is thread-safe.
        fileprivate let item: DispatchWorkItem
    }

    /// Monotonic nanoseconds now (the clock deadlines are given in).
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    private static let queue = DispatchQueue(label: "FormDataKit.SendTimer")

    /// Runs `work` at `deadline` (monotonic nanoseconds) on the timer queue, unless cancelled first.
    /// - Parameters:
    ///   - deadline: when, in ``now``'s clock.
    ///   - work: what to run; it returns quickly.
    /// - Returns: the token that cancels it.
    @discardableResult
    static func schedule(at deadline: UInt64, _ work: @escaping @Sendable () -> Void) -> Token {
        let item = DispatchWorkItem(block: work)
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline), execute: item)
        return Token(item: item)
    }

    /// Drops the deadline of `token` (nothing happens when it already ran).
    static func cancel(_ token: Token) {
        token.item.cancel()
    }
}
