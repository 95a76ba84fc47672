import Dispatch
import FormDataKit
import FormDataKitTesting
import Foundation

/// A receiver that holds its answer to every request until the test lets it go: the request is
/// in flight, with its body read by the server, for as long as the test needs, however late the
/// test's own tasks get a thread of the Swift concurrency pool. A test that must act while a send
/// is in flight (cancel it, start it again) waits for ``waitUntilArrived()`` instead of sleeping
/// against a server-side delay, so it cannot lose a race against the clock.
///
/// The hold is on the server's handler thread (``FormReceiver``'s `onRequest`), never on the pool;
/// it ends at ``release()`` or, so that no test can hang, after ``holdLimit``.
final class HeldAnswerReceiver: Sendable {
    /// The longest any answer is held when the test never releases it.
    static let holdLimit: DispatchTimeInterval = .seconds(60)

    private let arrived = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let releasedFlag = Locked(false)

    /// Runs `body` with a receiver whose answers are held, released and stopped afterwards.
    static func with<T>(_ body: (FormReceiver, HeldAnswerReceiver) async throws -> T) async throws -> T {
        let held = HeldAnswerReceiver()
        let receiver = try await FormReceiver.start(onRequest: { _ in held.hold() })
        let result: Result<T, any Error>
        do { result = .success(try await body(receiver, held)) } catch { result = .failure(error) }
        held.release()
        await receiver.stop()
        return try result.get()
    }

    private func hold() {
        arrived.signal()
        if releasedFlag.current { return }
        _ = released.wait(timeout: .now() + Self.holdLimit)
        released.signal()  // lets the next held answer (if any) go too
    }

    /// Waits, on a thread of its own, until a request has reached the server (its body read, its
    /// answer held). False if none came within `seconds`.
    func waitUntilArrived(seconds: Double = 30) async -> Bool {
        await TransportTestSupport.blocking { self.arrived.wait(timeout: .now() + seconds) == .success }
    }

    /// Lets every held answer go, and every later one through unheld.
    func release() {
        let first = releasedFlag.withLock { flag -> Bool in
            defer { flag = true }
            return !flag
        }
        if first { released.signal() }
    }
}
