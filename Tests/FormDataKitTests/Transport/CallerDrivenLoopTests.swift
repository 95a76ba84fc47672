import Foundation
import FormDataKitTesting
import Testing
@testable import FormDataKit

/// A caller waiting for its send drives the curl transport's loop on its own thread
/// (``CurlEventLoop/drive(until:after:)``): where the exchange's events arrive, what happens to
/// other sends in flight, and a cancel or a stop from another thread.
@Suite("CurlTransport: a waiting caller drives the loop")
struct CallerDrivenLoopTests {
    /// Records on which thread each event of one exchange arrived, and finishes a wait at the end.
    final class ThreadRecorder: TransportObserver, @unchecked Sendable {
        // `@unchecked`: `state` is locked.
        typealias Seen = (
            threads: Set<UInt>, finishThread: UInt, finishThreadName: String, status: Int, error: FormDataError?, finished: Bool
        )
        let state = Locked<Seen>(([], 0, "", 0, nil, false))
        let wait: SynchronousWait?
        init(finishing wait: SynchronousWait? = nil) { self.wait = wait }

        private func note() { state.withLock { _ = $0.threads.insert(UInt(pthread_self())) } }
        func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64) { note() }
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

    @Test("a send started elsewhere while a caller drives finishes too, handed back to the transport's thread when the caller is done")
    func otherSendsContinueAfterTheCaller() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            let other = ThreadRecorder()
            let callerThread = await TransportTestSupport.blocking { () -> UInt in
                let wait = SynchronousWait()
                let mine = ThreadRecorder(finishing: wait)
                transport.drive(until: wait) {
                    // Answered after 1.5 s: still in flight when the caller's own send ends.
                    _ = transport.start(Self.request(receiver.url("/delay/1500")), observer: other)
                    _ = transport.start(Self.request(receiver.url("/upload")), observer: mine)
                }
                #expect(mine.state.current.status == 200)
                return UInt(pthread_self())
            }
            let deadline = Date().addingTimeInterval(30)
            while !other.state.current.finished && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let state = other.state.current
            #expect(state.finished)
            #expect(state.status == 200)
            #expect(state.error == nil)
            // Its answer came after the caller left: on the transport's thread, not the caller's.
            #expect(state.finishThread != callerThread)
            #expect(state.finishThreadName == "FDK.Curl")
        }
    }

    @Test("a cancel from another thread ends the caller's send while it sleeps in the loop")
    func cancelFromAnotherThread() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            let error = await TransportTestSupport.blocking { () -> FormDataError? in
                let wait = SynchronousWait()
                let recorder = ThreadRecorder(finishing: wait)
                let task = Locked<(any TransportTask)?>(nil)
                Thread.detachNewThread {
                    Thread.sleep(forTimeInterval: 0.3)
                    task.current?.cancel()
                }
                // Answered after 3 s unless the cancel ends it first (then it would finish with no error).
                transport.drive(until: wait) {
                    task.withLock { $0 = transport.start(Self.request(receiver.url("/delay/3000")), observer: recorder) }
                }
                return recorder.state.current.error
            }
            #expect(error == .cancelled)
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

    @Test("a stop while a caller drives fails its send with cancelled and returns the caller")
    func stopWhileDriving() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let transport = CurlTransport()
            let error = await TransportTestSupport.blocking { () -> FormDataError? in
                let wait = SynchronousWait()
                let recorder = ThreadRecorder(finishing: wait)
                Thread.detachNewThread {
                    Thread.sleep(forTimeInterval: 0.3)
                    transport.eventLoop.stopAndWait()
                }
                transport.drive(until: wait) { _ = transport.start(Self.request(receiver.url("/delay/3000")), observer: recorder) }
                return recorder.state.current.error
            }
            #expect(error == .cancelled)
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
