import Foundation

/// Back-pressure on a response body: the one owner of when an exchange stops receiving because
/// what consumes its bytes (a file on a slow disk) is behind, and of when it starts again.
///
/// The consumer counts the bytes it took (``took(_:)``) and those it is done with
/// (``finished(_:)``). While more than ``limit`` are outstanding, a transport that asks before it
/// hands over more bytes (``pausesReceiving(resumingWith:)``) pauses that exchange — libcurl's
/// `CURL_WRITEFUNC_PAUSE`, an AsyncHTTPClient body part's future left pending — and nothing
/// waits: not the transport's event thread, not the other exchanges it carries. Once the
/// consumer is down to ``resumeThreshold`` bytes the paused exchange is resumed. So the bytes
/// in memory stay within ``limit`` and one transport buffer.
///
/// Threads: any; the state is under one lock, and the transport's resume runs outside it.
package final class ResponseDemand: Sendable {
    /// The bytes outstanding at most before the exchange pauses: 8 MiB.
    package static let defaultLimit = 8 << 20

    /// The most bytes outstanding before a transport pauses the exchange.
    let limit: Int
    /// The bytes outstanding at or below which a paused exchange resumes (half of ``limit``).
    let resumeThreshold: Int

    private struct State {
        var outstanding = 0
        /// Set while more than `limit` bytes are outstanding (until down to `resumeThreshold`).
        var withheld = false
        /// Whether demand was given up for good (the consumer failed or finished): never pause.
        var released = false
        /// The paused exchange's resume, run once when demand comes back.
        var resume: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    /// Demand with `limit` bytes outstanding at most, resumed at half of it.
    /// - Parameter limit: the most bytes outstanding before the exchange pauses (at least 1).
    package init(limit: Int = ResponseDemand.defaultLimit) {
        self.limit = max(1, limit)
        resumeThreshold = self.limit / 2
    }

    /// The consumer took `count` bytes (they are in memory until ``finished(_:)``); past
    /// ``limit`` outstanding, demand is withheld.
    /// - Parameter count: the bytes taken.
    package func took(_ count: Int) {
        state.withLock { state in
            state.outstanding += count
            if state.outstanding > limit, !state.released { state.withheld = true }
        }
    }

    /// The consumer is done with `count` bytes (written, or dropped after a failure); at or
    /// below ``resumeThreshold`` outstanding, a paused exchange resumes (its resume runs here).
    /// - Parameter count: the bytes finished with.
    package func finished(_ count: Int) {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.outstanding -= count
            guard state.withheld, state.outstanding <= resumeThreshold else { return nil }
            state.withheld = false
            defer { state.resume = nil }
            return state.resume
        }
        resume?()
    }

    /// The consumer wants no more pauses (it failed, and the send is being cancelled): a paused
    /// exchange resumes now, so nothing stays paused whatever happens next.
    package func release() {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.released = true
            state.withheld = false
            defer { state.resume = nil }
            return state.resume
        }
        resume?()
    }

    /// For a transport, before it hands over more response bytes: whether the exchange must
    /// pause first. When true, `resume` is kept and runs once, on the consumer's thread, when
    /// demand is back: it must only tell the transport (its event thread then continues the
    /// exchange and asks again). A later pause replaces a resume kept for an exchange that ended.
    /// - Parameter resume: what continues the exchange.
    /// - Returns: true when the exchange must pause now.
    package func pausesReceiving(resumingWith resume: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.withheld else { return false }
            state.resume = resume
            return true
        }
    }

    /// Whether demand is withheld now (a transport's cheap check before it makes a resume).
    package var isWithheld: Bool { state.withLock { $0.withheld } }

    /// The demand an exchange's `observer` carries, if any (``ResponseDemandingObserver``).
    /// - Parameter observer: the exchange's observer.
    /// - Returns: its demand, or nil when it takes bytes as fast as they come.
    package static func of(_ observer: any TransportObserver) -> ResponseDemand? {
        (observer as? any ResponseDemandingObserver)?.responseDemand
    }
}

/// An exchange's observer whose consumer may fall behind: a transport that can pause asks its
/// ``responseDemand`` before it hands over response bytes (``ResponseDemand/of(_:)``). The send
/// driver's observers are; a transport that cannot pause just hands them over.
package protocol ResponseDemandingObserver: TransportObserver {
    /// The demand for this exchange's response body; nil: never pause.
    var responseDemand: ResponseDemand? { get }
}
