@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// The whole send's deadline beside the idle clock: transition by transition, no clock of its own.
@Suite("SendStateMachine total deadline")
struct SendDeadlineTests {
    typealias Machine = SendStateMachine
    static let second: UInt64 = 1_000_000_000

    static func machine(idle: UInt64, total: UInt64, retries: Int = 0) -> Machine {
        let request = TransportRequest(
            url: URL(string: "http://example.test/upload")!, method: "POST", headers: [], body: .data(Data(count: 100)),
            timeoutInterval: 0)
        return Machine(
            request: request,
            configuration: .init(retriesOnTimeout: retries, idleTimeoutNanoseconds: idle, totalTimeoutNanoseconds: total))
    }

    static func isTotalTimeout(_ actions: [Machine.Action], exchange id: Int) -> Bool {
        guard actions.count == 2, actions[0] == .cancelExchange(id: id), case .finish(.failure(.timedOut(let underlying))) = actions[1]
        else { return false }
        return underlying.message.contains("total timeout of 5.0 s")
    }

    @Test("with only a total deadline, the clock is armed at it and the send ends there, its exchange stopped")
    func totalOnly() {
        var machine = Self.machine(idle: 0, total: 5 * Self.second)
        let actions = machine.handle(.start(now: 0))
        #expect(actions.last == .armTimer(deadline: 5 * Self.second))
        #expect(machine.handle(.bodySent(id: 1, totalBytesSent: 10, now: 4 * Self.second)) == [.reportProgress(delta: 10)])
        #expect(Self.isTotalTimeout(machine.handle(.clock(now: 5 * Self.second)), exchange: 1))
        #expect(machine.isFinished)
    }

    @Test("a trickle keeps the idle clock happy, but not the total deadline: re-armed at the earlier of the two")
    func trickleStoppedByTotal() {
        var machine = Self.machine(idle: 2 * Self.second, total: 5 * Self.second)
        #expect(machine.handle(.start(now: 0)).last == .armTimer(deadline: 2 * Self.second))
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 1, now: 1 * Self.second))
        // Idle since 1 s: the next idle deadline is 3 s.
        #expect(machine.handle(.clock(now: 2 * Self.second)) == [.armTimer(deadline: 3 * Self.second)])
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 2, now: 2500 * Self.second / 1000))
        // Idle would be 4.5 s; the total comes first at 5 s.
        #expect(machine.handle(.clock(now: 3 * Self.second)) == [.armTimer(deadline: 4500 * Self.second / 1000)])
        _ = machine.handle(.bodySent(id: 1, totalBytesSent: 3, now: 4 * Self.second))
        #expect(machine.handle(.clock(now: 4500 * Self.second / 1000)) == [.armTimer(deadline: 5 * Self.second)])
        #expect(Self.isTotalTimeout(machine.handle(.clock(now: 5 * Self.second)), exchange: 1))
    }

    @Test("the total deadline spans retries after idle timeouts, and is itself never retried")
    func spansRetries() {
        var machine = Self.machine(idle: 2 * Self.second, total: 5 * Self.second, retries: 5)
        _ = machine.handle(.start(now: 0))
        let retry = machine.handle(.clock(now: 2 * Self.second))
        #expect(retry.contains(.reportRetry(retryCount: 1)))
        #expect(retry.last == .armTimer(deadline: 4 * Self.second))
        let second = machine.handle(.clock(now: 4 * Self.second))
        #expect(second.contains(.reportRetry(retryCount: 2)))
        // The third attempt's idle deadline (6 s) is after the total one.
        #expect(second.last == .armTimer(deadline: 5 * Self.second))
        #expect(Self.isTotalTimeout(machine.handle(.clock(now: 5 * Self.second)), exchange: 3))
        #expect(machine.retryCount == 2)
    }

    @Test("a send that ends before its deadline is not touched by a late clock")
    func lateClockIgnored() {
        var machine = Self.machine(idle: 0, total: 5 * Self.second)
        _ = machine.handle(.start(now: 0))
        _ = machine.handle(.responseHead(id: 1, head: TransportResponseHead(statusCode: 200, headers: [:]), now: 1))
        let end = machine.handle(.exchangeEnded(id: 1, error: nil, now: 2))
        #expect(end.contains { if case .finish(.response) = $0 { return true } else { return false } })
        #expect(machine.handle(.clock(now: 5 * Self.second)) == [])
    }
}
