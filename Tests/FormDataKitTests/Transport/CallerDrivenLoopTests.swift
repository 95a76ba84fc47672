@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTesting
import Testing
@testable import FormDataKit

/// A caller waiting for its send drives the curl transport's loop on its own thread
/// (``CurlEventLoop/drive(until:after:)``): where the exchange's events arrive, what happens to
/// sends still in flight when it leaves, a cancel or a stop from another thread, many callers.
@Suite("CurlTransport: a waiting caller drives the loop")
struct CallerDrivenLoopTests {
    /// Records on which thread each event of one exchange arrived, and finishes a wait at the end.
    final class ThreadRecorder: TransportObserver, @unchecked Sendable {
        // `@unchecked`: `state` is locked.
        typealias Seen = (
            threads: Set<UInt>, firstSentThread: UInt?, finishThread: UInt, finishThreadName: String, status: Int,
            error: FormDataError?, finished: Bool
        )
        let state = Locked<Seen>(([], nil, 0, "", 0, nil, false))
        let wait: SynchronousWait?
        /// Finished at the first report of body bytes sent (else `wait` at the end).
        let sentWait: SynchronousWait?
        init(finishing wait: SynchronousWait? = nil, whenBodySent sentWait: SynchronousWait? = nil) {
            self.wait = wait
            self.sentWait = sentWait
        }

        private func note() { state.withLock { _ = $0.threads.insert(UInt(pthread_self())) } }
        func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64) {
            note()
            state.withLock { $0.firstSentThread = $0.firstSentThread ?? UInt(pthread_self()) }
            sentWait?.finish()
        }
        func transportDidReceiveResponse(_ head: TransportResponseHead) {
            note()
            state.withLock { $0.status = head.statusCode }
        }
        func transportDidReceiveBodyData(_ data: Data) { note() }
        func transportDidFinish(_ error: FormDataError?) {
            note()
            state.withLock {
                $0.finishThread = UInt(pthread_self())
                // The name the system sees (not Foundation's).
                $0.finishThreadName = ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .newlines)
                $0.error = error
                $0.finished = true
            }
            wait?.finish()
        }
    }

    static func request(_ url: URL, timeout: TimeInterval = 60) -> TransportRequest {
        TransportRequest(
            url: url, method: "POST", headers: [(name: "Content-Type", value: "text/plain")],
            body: .data(Data("a body".utf8)), timeoutInterval: timeout)
    }

    @Test("every event of the caller's exchange arrives on the caller's own thread")
    func eventsOnTheCallersThread() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            let outcome = await TransportTestSupport.blocking { () -> (Set<UInt>, UInt, Int, FormDataError?) in
                let wait = SynchronousWait()
                let recorder = ThreadRecorder(finishing: wait)
                transport.drive(until: wait) { _ = transport.start(Self.request(receiver.url("/upload")), observer: recorder) }
                let state = recorder.state.current
                return (state.threads, UInt(pthread_self()), state.status, state.error)
            }
            #expect(outcome.2 == 200)
            #expect(outcome.3 == nil)
            #expect(outcome.0 == [outcome.1], "events on threads \(outcome.0), the caller is \(outcome.1)")
        }
    }

    @Test("a send in the caller's rounds when the caller leaves goes on, on the transport's thread, and is answered")
    func sendsInFlightGoBackToTheTransportsThread() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            // The caller's wait ends as soon as the body went out; the answer comes 3 s later.
            let wait = SynchronousWait()
            let finished = SynchronousWait()
            let other = ThreadRecorder(finishing: finished, whenBodySent: wait)
            let callerThread = await TransportTestSupport.blocking { () -> UInt in
                transport.drive(until: wait) { _ = transport.start(Self.request(receiver.url("/delay/3000")), observer: other) }
                return UInt(pthread_self())
            }
            #expect(other.state.current.firstSentThread == callerThread, "the body went out in the caller's rounds")
            // Waits for the send's end (it has a 60 s idle timeout of its own).
            await TransportTestSupport.blocking { finished.wait() }
            let state = other.state.current
            #expect(state.finished)
            #expect(state.status == 200)
            #expect(state.error == nil)
            #expect(state.finishThread != callerThread)
            #expect(state.finishThreadName == "FDK.Curl")
        }
    }

    @Test("a cancel from another thread ends the caller's send while it sleeps in the loop")
    func cancelFromAnotherThread() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            #expect(await Self.endedWhileDriving(receiver, on: transport) { task in task.cancel() }.error == .cancelled)
        }
    }

    @Test("a send that ends without the loop (its transport stopped) still returns the waiting caller")
    func stoppedTransport() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            await transport.shutdown()
            let error = await TransportTestSupport.blocking { () -> FormDataError? in
                let wait = SynchronousWait()
                let recorder = ThreadRecorder(finishing: wait)
                transport.drive(until: wait) { _ = transport.start(Self.request(receiver.url("/upload")), observer: recorder) }
                return recorder.state.current.error
            }
            #expect(error == CurlTransport.stoppedError)
        }
    }

    @Test("a cancel from another thread ends a spin at once: the caller does not spin out its limit")
    func cancelEndsASpin() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = Self.spinningForTwoMinutes()
            let ended = await Self.endedWhileDriving(receiver, on: transport) { task in task.cancel() }
            #expect(ended.error == .cancelled)
            // A spin deaf to the cancel would last until the answer, 30 s after the start (its
            // limit is two minutes); measured from the cancel, the caller returns in milliseconds,
            // a second or two when the machine's cores are busy: 20 s is ten times that.
            #expect(ended.afterEnd < 20, "\(ended.afterEnd) s")
        }
    }

    @Test("a stop from another thread ends a spin at once")
    func stopEndsASpin() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = Self.spinningForTwoMinutes()
            let ended = await Self.endedWhileDriving(receiver, on: transport) { _ in transport.eventLoop.stop() }
            #expect(ended.error == .cancelled)
            // As above: a deaf spin would last until the answer, 30 s after the start.
            #expect(ended.afterEnd < 20, "\(ended.afterEnd) s")
        }
    }

    /// A transport whose driving caller spins up to two minutes once its body is on the wire (the
    /// configuration allows a second at most; set on the loop before any send, so before any owner).
    static func spinningForTwoMinutes() -> CurlTransport {
        let transport = CurlTransport()
        transport.eventLoop.spinWait = CurlSpinWait(limit: 120 * 1_000_000_000)
        return transport
    }

    @Test("a stop while a caller drives fails its send with cancelled and returns the caller")
    func stopWhileDriving() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            #expect(await Self.endedWhileDriving(receiver, on: transport) { _ in transport.eventLoop.stopAndWait() }.error == .cancelled)
        }
    }

    /// Drives, on a plain thread, a send that `receiver` answers only after 30 s, and calls `end`
    /// from another thread once the caller waits for the answer in the loop (its body sent, the
    /// loop marked sleeping: spinning or in `curl_multi_poll`); the send's error (nil: `end` did
    /// not end it) and how long after `end` the caller returned.
    static func endedWhileDriving(
        _ receiver: FormReceiver, on transport: CurlTransport, by end: @escaping @Sendable (any TransportTask) -> Void
    ) async -> (error: FormDataError?, afterEnd: TimeInterval) {
        await TransportTestSupport.blocking { () -> (error: FormDataError?, afterEnd: TimeInterval) in
            let wait = SynchronousWait()
            let sent = SynchronousWait()
            let recorder = ThreadRecorder(finishing: wait, whenBodySent: sent)
            let task = Locked<(any TransportTask)?>(nil)
            let endedAt = Locked<Date?>(nil)
            Thread.detachNewThread {
                // The events a fixed 0.2 s sleep hoped had happened: the body is out, and the
                // caller has nothing left but to wait for the answer in the loop. (Looked at
                // every millisecond; the caller gets there in a round.)
                sent.wait()
                let loop = transport.eventLoop
                while !wait.isFinished, !loop.lock.withLock({ loop.owner == .caller && loop.sleeping }) { usleep(1_000) }
                endedAt.withLock { $0 = Date() }
                if let started = task.current { end(started) }
            }
            transport.drive(until: wait) {
                task.withLock { $0 = transport.start(Self.request(receiver.url("/delay/30000")), observer: recorder) }
            }
            let returned = Date()
            return (recorder.state.current.error, returned.timeIntervalSince(endedAt.current ?? returned))
        }
    }

    @Test("startSynchronous from eight threads at once on one transport: every send answered, exact")
    func manyCallersAtOnce() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            let results = await withTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        await TransportTestSupport.blocking { () -> (Int, String?) in
                            var statuses: [Int] = []
                            var failure: String?
                            for round in 0..<10 {
                                let request = FormDataRequest(url: receiver.url("/upload"))
                                request.transport = transport
                                request.timeOutSeconds = TransportTestSupport.patientTimeout
                                request.addPostValue("\(index)-\(round)", forKey: "sender")
                                if let error = request.startSynchronous() { failure = "\(error)" }
                                statuses.append(request.responseStatusCode)
                                if request.responseString?.contains("\(index)-\(round)") != true { failure = "body of \(index)-\(round)" }
                            }
                            return (statuses.filter { $0 == 200 }.count, failure)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.map(\.0) == Array(repeating: 10, count: 8))
            #expect(results.compactMap(\.1).isEmpty, "\(results.compactMap(\.1))")
        }
    }
}
