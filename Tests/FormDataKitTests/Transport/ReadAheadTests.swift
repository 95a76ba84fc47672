@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting
import Testing
@testable import FormDataKit

/// The curl transport reads bodies on the reader pool, never on its event thread: a body whose
/// file blocks (a hung network file system, here an ``OpenGate`` the transport opens its bodies'
/// files with) holds only its own send, which still ends by its timeout or a cancel.
///
/// Nothing here is timed against the wall clock: a gate holds its files until the test releases
/// it, so "not held by the blocked send" is checked as "finished while the gate still held"
/// (``OpenGate/isHolding``), which a loaded machine cannot make false. The waits' bounds are
/// only there so that a broken build fails instead of hanging (``ReadAheadTests/eventBound``).
@Suite("Curl transport: a blocked body read holds only its own send", .serialized)
struct ReadAheadTests {
    typealias Support = TransportTestSupport

    /// How long a wait for an event of these tests (a blocked open, a send's end) may take before
    /// the test fails instead of hanging: each takes milliseconds on an idle machine and seconds
    /// at most on one whose cores are busy with other builds; a minute is ten times that. No
    /// assertion depends on it: a send that is held waits for its gate, which never opens
    /// during a test (``OpenGate/safetyLimit`` is longer still).
    static let eventBound: TimeInterval = 60

    @Test(
        "one body's reads block until released: 20 other sends on the same transport finish meanwhile, the blocked one times out at its 1 s"
    )
    func blockedReadTimesOut() async throws {
        try await Support.withReceiver { receiver in
            let blockedFile = try Support.makeFile(size: 300_000, seed: 81, name: "blocked.bin")
            let otherFile = try Support.makeFile(size: 200_000, seed: 82)
            defer {
                blockedFile.remove()
                otherFile.remove()
            }
            let gate = OpenGate(blocking: [blockedFile.path])
            defer { gate.release() }
            let transport = CurlTransport(files: gate)
            let request = try TransportMatrixTests.formRequest(receiver.url("/upload"), file: blockedFile.path, transport: transport)
            request.timeOutSeconds = 1
            let blocked = ThreadedSend(request)
            #expect(await gate.waitUntilEntered(count: 1, within: Self.eventBound))
            await Self.sendOthers(20, file: otherFile.path, to: receiver, on: transport, whileHeldBy: gate)
            let outcome = await blocked.outcome(within: Self.eventBound)
            guard case .failure(.timedOut)? = outcome else {
                Issue.record("the blocked send should have timed out at 1 s; it ended with \(String(describing: outcome))")
                return
            }
            // It did not wait for the read: it ended while its open was still held.
            #expect(gate.isHolding, "the blocked send ended only after its read was let go")
            // Not before its timeout: a clock never runs fast (5 % for the wall clock read here
            // against the driver's monotonic one).
            #expect(try #require(blocked.elapsed) >= 0.95)
        }
    }

    @Test(
        "a synchronous send whose start waits (its build's stat hangs on its file system) holds no other send on the same transport"
    )
    func blockedStartHoldsNoOtherSend() async throws {
        try await Support.withReceiver { receiver in
            let transport = CurlTransport()
            let otherFile = try Support.makeFile(size: 2_000, seed: 84)
            defer { otherFile.remove() }
            // What `startSynchronous()` gives the transport: a start (the build, which checks the
            // files, then the send's start), run before the caller claims the loop. Here it waits
            // as a hung file system's stat would, until the test lets it go.
            let (entered, held, ended) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let wait = SynchronousWait()
            Thread.detachNewThread {
                transport.drive(until: wait) {
                    entered.signal()
                    _ = held.wait(timeout: .now() + OpenGate.safetyLimit)
                    wait.finish()
                }
                ended.signal()
            }
            #expect(await Support.blocking { entered.wait(timeout: .now() + Self.eventBound) } == .success)
            await Self.sendOthers(5, file: otherFile.path, to: receiver, on: transport)
            #expect(!wait.isFinished, "the waiting start ended before the other sends")
            held.signal()
            #expect(await Support.blocking { ended.wait(timeout: .now() + Self.eventBound) } == .success)
        }
    }

    @Test(
        "a body file whose close hangs (a file system that flushes on close): the send and 20 others on the same transport finish while it hangs",
        arguments: [true, false]
    )
    func blockedCloseHoldsNoSend(synchronous: Bool) async throws {
        try await Support.withReceiver { receiver in
            // Read ahead through the pool, let go where its transfer ends.
            let blockedFile = try Support.makeFile(size: 300_000, seed: 96, name: "blocked-close.bin")
            let otherFile = try Support.makeFile(size: 200_000, seed: 97)
            defer {
                blockedFile.remove()
                otherFile.remove()
            }
            let gate = OpenGate(blocking: [blockedFile.path], closes: true)
            defer { gate.release() }
            let transport = CurlTransport(files: gate)
            let request = try TransportMatrixTests.formRequest(receiver.url("/discard"), file: blockedFile.path, transport: transport)
            // Sent by its caller driving the loop (startSynchronous), or by the transport's own thread.
            if synchronous {
                let outcome = await ThreadedSend(request).outcome(within: Self.eventBound)
                #expect((try? outcome?.get()) == 200, "\(String(describing: outcome))")
            } else {
                let outcome = await Support.outcome(of: request)
                #expect((try? outcome.get())?.statusCode == 200, "\(outcome)")
            }
            // Its file's close now hangs (on the reader pool, not on a thread that drives the loop):
            // the send above ended without waiting for it.
            #expect(await gate.waitUntilEntered(count: 1, within: Self.eventBound))
            await Self.sendOthers(20, file: otherFile.path, to: receiver, on: transport, whileHeldBy: gate)
        }
    }

    @Test("a send whose body read is blocked is cancelled at once")
    func blockedReadCancelled() async throws {
        try await Support.withReceiver { receiver in
            let blockedFile = try Support.makeFile(size: 300_000, seed: 83, name: "blocked.bin")
            defer { blockedFile.remove() }
            let gate = OpenGate(blocking: [blockedFile.path])
            defer { gate.release() }
            let transport = CurlTransport(files: gate)
            let request = try TransportMatrixTests.formRequest(receiver.url("/upload"), file: blockedFile.path, transport: transport)
            let blocked = ThreadedSend(request)
            #expect(await gate.waitUntilEntered(count: 1, within: Self.eventBound))
            request.cancel()
            let outcome = await blocked.outcome(within: Self.eventBound)
            #expect(outcome?.failureValue == .cancelled, "\(String(describing: outcome))")
            // At once, not when the read returns: it ended while the open was still held.
            #expect(gate.isHolding, "the cancelled send ended only after its read was let go")
        }
    }

    @Test("three bodies blocked at once (more than the pool's two readers): other sends still finish while they are blocked")
    func morePoolThreadsWhenReadersStall() async throws {
        try await Support.withReceiver { receiver in
            // Above the transport's in-memory limit (128 KiB), so they are read ahead on the pool.
            let blockedFiles = try (0..<3).map { try Support.makeFile(size: 150_000, seed: 90 + UInt64($0), name: "blocked\($0).bin") }
            // The other sends' bodies are read ahead on the pool too.
            let otherFile = try Support.makeFile(size: 200_000, seed: 95)
            defer {
                blockedFiles.forEach { $0.remove() }
                otherFile.remove()
            }
            let gate = OpenGate(blocking: Set(blockedFiles.map(\.path)))
            defer { gate.release() }
            let transport = CurlTransport(files: gate)
            let blocked = try blockedFiles.map { file in
                ThreadedSend(try TransportMatrixTests.formRequest(receiver.url("/upload"), file: file.path, transport: transport))
            }
            // Two readers block at once; the third body waits for a replacement reader (started by
            // the pool's supervisor once a worker has been in one job for its stall threshold),
            // then blocks too. The gate holds them all until released, however long that takes on
            // a loaded machine (its old 10 s limit let the first opens go before the third came).
            #expect(await gate.waitUntilEntered(count: 3, within: Self.eventBound))
            await Self.sendOthers(5, file: otherFile.path, to: receiver, on: transport, whileHeldBy: gate)
            for send in blocked { send.request.cancel() }
            for send in blocked { #expect(await send.outcome(within: Self.eventBound)?.failureValue == .cancelled) }
            #expect(gate.isHolding, "the cancelled sends ended only after their reads were let go")
        }
    }

    @Test("a FIFO put in place of a file after the build fails the send promptly, naming it; never hangs")
    func fifoSwappedAfterBuild() async throws {
        try await Support.withReceiver { receiver in
            let file = try Support.makeFile(size: 50_000, seed: 84, name: "photo.jpg")
            defer { file.remove() }
            let request = try TransportMatrixTests.formRequest(receiver.url("/upload"), file: file.path, transport: CurlTransport())
            try request.buildPostBody()
            try SpecialFiles.replaceWithFIFO(file.path)
            let outcome = await ThreadedSend(request).outcome(within: Self.eventBound)
            if outcome == nil { SpecialFiles.releaseReaders(ofFIFO: file.path) }  // the old code: blocked in open(2)
            #expect(outcome?.failureValue == .internalErrorWhileBuilding(underlying: .notARegularFile(path: file.path, kind: "FIFO")))
        }
    }

    @Test(
        "a challenge answered after a bare first try: libcurl rewinds the body (the read-ahead restarts) and the second try carries it whole"
    )
    func rewindForChallenge() async throws {
        try await Support.withReceiver { receiver in
            let file = try Support.makeFile(size: 700_000, seed: 85)
            defer { file.remove() }
            let request = try TransportMatrixTests.formRequest(receiver.url("/auth/u/p"), file: file.path, transport: CurlTransport())
            request.username = "u"
            request.password = "p"
            request.shouldPresentCredentialsBeforeChallenge = false
            try request.buildPostBody()
            let expected = SHA256.hex(try #require(request.bodySource).readAll())
            let outcome = await ThreadedSend(request).outcome(within: Self.eventBound)
            #expect((try? outcome?.get()) == 200, "\(String(describing: outcome))")
            let received = receiver.requests
            #expect(received.count == 2)
            // The first try went out whole too (the server read it before answering 401), so the
            // second needed the body from its start again.
            #expect(received.map(\.bodyBytes) == [Int(request.postLength), Int(request.postLength)])
            #expect(received.last?.bodySHA256 == expected)
        }
    }

    @Test(
        "a body up to the transport's in-memory limit is read where the send is prepared: the transport's file opener never sees it"
    )
    func smallBodyNotReadByTransport() async throws {
        try await Support.withReceiver { receiver in
            let file = try Support.makeFile(size: 100_000, seed: 88, name: "small.bin")
            defer { file.remove() }
            let gate = OpenGate(blocking: [file.path])
            defer { gate.release() }
            let request = try TransportMatrixTests.formRequest(
                receiver.url("/upload"), file: file.path, transport: CurlTransport(files: gate))
            try request.buildPostBody()
            #expect(request.postLength <= CurlTransport().inMemoryBodyLimit)
            let expected = SHA256.hex(try #require(request.bodySource).readAll())
            let outcome = await ThreadedSend(request).outcome(within: Self.eventBound)
            #expect((try? outcome?.get()) == 200, "\(String(describing: outcome))")
            #expect(receiver.requests.last?.bodySHA256 == expected)
            #expect(await !gate.waitUntilEntered(count: 1, within: 0), "the transport opened the small body's file itself")
        }
    }

    @Test("a small form goes out exact whether its file is in memory or was dropped from it")
    func smallBodyReadWhereBuiltOrOnPool() async throws {
        try await Support.withReceiver { receiver in
            let transport = CurlTransport()
            for evicting in [false, true] {
                let file = try ScratchBytes(count: 20_000, seed: evicting ? 87 : 86)
                defer { file.remove() }
                let request = try TransportMatrixTests.formRequest(receiver.url("/upload"), file: file.path, transport: transport)
                try request.buildPostBody()
                let expected = SHA256.hex(try #require(request.bodySource).readAll())
                if evicting, try !file.evictFromMemory() { continue }  // a file system that keeps files in memory
                let outcome = await ThreadedSend(request).outcome(within: Self.eventBound)
                #expect((try? outcome?.get()) == 200, "\(String(describing: outcome))")
                #expect(receiver.requests.last?.bodySHA256 == expected)
            }
        }
    }

    // MARK: - Helpers

    /// Sends `count` forms with `file` one after another on `transport`; each must be answered 200
    /// with its whole body (a send that is not answered within ``eventBound`` is recorded, and the
    /// rest are not tried), and, given a `gate`, while that gate still holds its files: a send held
    /// by the blocked one could only end once the gate let go. (This was "within 2 s each" on
    /// the wall clock, which a machine whose cores are busy broke.) They go to the receiver's
    /// `/discard`, which counts the body without parsing or hashing it.
    static func sendOthers(
        _ count: Int, file: String, to receiver: FormReceiver, on transport: CurlTransport, whileHeldBy gate: OpenGate? = nil
    ) async {
        for index in 0..<count {
            let send: ThreadedSend
            do {
                send = ThreadedSend(try TransportMatrixTests.formRequest(receiver.url("/discard"), file: file, transport: transport))
            } catch {
                Issue.record("send \(index): \(error)")
                return
            }
            guard let outcome = await send.outcome(within: eventBound) else {
                Issue.record("send \(index) did not finish within \(eventBound) s")
                send.request.cancel()
                return
            }
            if let gate {
                #expect(gate.isHolding, "send \(index) finished only after the blocked file was let go")
            }
            #expect((try? outcome.get()) == 200, "send \(index): \(outcome)")
            // This send's request is the receiver's latest to `/discard`: a caller's own send to
            // another route (NetworkOptionsTests' cookie setter) may arrive at any point between.
            let received = receiver.requests.last { $0.path.hasPrefix("/discard") }
            #expect(received?.bodyBytes == Int(send.request.postLength), "send \(index): the whole body arrived")
        }
    }
}

/// A send run with `startSynchronous()` on a thread of its own, started at once: neither the send
/// nor the waits for it need the Swift concurrency pool, which other suites keep busy.
final class ThreadedSend: @unchecked Sendable {
    // `@unchecked`: `result` is a `Locked`; the rest is immutable.
    let request: FormDataRequest
    let started = Date()
    private let done = DispatchSemaphore(value: 0)
    private let result = Locked<(outcome: Result<Int, FormDataError>, at: Date)?>(nil)

    init(_ request: FormDataRequest) {
        self.request = request
        let result = self.result
        let done = self.done
        Thread.detachNewThread {
            let error = request.startSynchronous()
            result.withLock { $0 = (error.map { .failure($0) } ?? .success(request.responseStatusCode), Date()) }
            done.signal()
        }
    }

    /// When the send ended (nil while it runs).
    var finishedAt: Date? { result.current?.at }
    /// How long the send took (nil while it runs).
    var elapsed: TimeInterval? { finishedAt?.timeIntervalSince(started) }

    /// The status code or the error, or nil when the send has not ended within `seconds` (it is
    /// left running).
    func outcome(within seconds: TimeInterval) async -> Result<Int, FormDataError>? {
        let done = self.done
        let result = self.result
        return await TransportTestSupport.blocking {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            done.signal()  // for a later call
            return result.current?.outcome
        }
    }
}

extension Result {
    /// The error of a failure, nil for a success.
    fileprivate var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Opens and closes files for a ``CurlTransport`` (``FileOpening``) as a file system that hangs:
/// every open of the given paths — or with `closes` only their closes — blocks until
/// ``release()`` (or, should a test never release it, ``safetyLimit``); other paths open and
/// close as the system's do. ``isHolding`` tells whether it has let nothing go yet.
final class OpenGate: FileOpening, @unchecked Sendable {
    // `@unchecked`: `paths`, `limit` and `closes` never change; the semaphores are thread-safe.
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    /// Set once a blocked call went on (released, or the limit passed).
    private let letGo = Locked(false)
    private let paths: Set<String>
    private let limit: TimeInterval
    /// Whether a close of the paths blocks instead of their opens.
    private let closes: Bool
    private let system = SystemFileOpening()

    /// How long a blocked call waits when the test never releases the gate: far beyond any
    /// test's waits (``ReadAheadTests/eventBound``), so it never opens while a test relies on it,
    /// and still ends a blocked reader thread of a test that failed before its release.
    static let safetyLimit: TimeInterval = 600

    init(blocking paths: Set<String>, for limit: TimeInterval = OpenGate.safetyLimit, closes: Bool = false) {
        (self.paths, self.limit, self.closes) = (paths, limit, closes)
    }

    func openForReading(_ path: String) -> Int32 {
        if !closes, blocks(path) { block() }
        return system.openForReading(path)
    }

    func close(_ descriptor: Int32, path: String) {
        if closes, blocks(path) { block() }
        system.close(descriptor, path: path)
    }

    /// Whether a call on `path` blocks: one of the gate's paths, not yet released.
    private func blocks(_ path: String) -> Bool { paths.contains(path) && !letGo.current }

    private func block() {
        entered.signal()
        _ = released.wait(timeout: .now() + limit)
        letGo.withLock { $0 = true }
        released.signal()  // passed on to the next blocked call
    }

    /// Whether every blocked call is still blocked: not released, and no time limit passed.
    var isHolding: Bool { !letGo.current }

    /// Whether `count` calls have blocked within `seconds` (waited for on a plain thread).
    func waitUntilEntered(count: Int, within seconds: TimeInterval) async -> Bool {
        let entered = self.entered
        return await TransportTestSupport.blocking {
            let deadline = DispatchTime.now() + seconds
            for _ in 0..<count where entered.wait(timeout: deadline) == .timedOut { return false }
            return true
        }
    }

    /// Lets every blocked call go on, and stops blocking this gate's paths.
    func release() {
        letGo.withLock { $0 = true }
        released.signal()
    }
}
