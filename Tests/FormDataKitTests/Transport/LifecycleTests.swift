import Foundation
import FormDataKit
import FormDataKitTesting
import FormDataKitTestSupport
import Testing

@Suite("Request lifecycle: delegate, blocks, progress, timeouts, cancel, temp files")
struct LifecycleTests {
    typealias Support = TransportTestSupport

    @Test("startSynchronous blocks until done and sets the response; temp body file removed", arguments: TransportKind.allCases)
    func synchronous(kind: TransportKind) async throws {
        let file = try Support.makeFile(size: 1_000_000, seed: 11)
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/sync"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("sync", forKey: "mode")
            try request.addFile(file.path, forKey: "file")
            try request.buildPostBody()
            // A build never spools. URLSession is handed these 1 MB in memory (under its 8 MiB
            // limit); curl and AsyncHTTPClient stream the parts.
            #expect(!request.isPostBodySpooled)
            let delegate = RecordingDelegate()
            request.delegate = delegate
            await Support.blocking { request.startSynchronous() }

            #expect(request.error == nil)
            #expect(request.responseStatusCode == 200)
            #expect(request.responseHeaders?["Content-Type"] == "application/json; charset=utf-8")
            let decoded = try JSONDecoder().decode(ReceivedRequest.self, from: try #require(request.responseData))
            #expect(decoded.form?.file("file")?.sha256 == file.sha256)
            #expect(request.responseString?.hasPrefix("{") == true)
            #expect(delegate.log == ["started", "sent", "headers", "finished"])
            #expect(!request.isPostBodySpooled)
            #expect(!request.isPostBodySpooled)
        }
    }

    @Test("startSynchronous on the main actor (as ported ASI code calls it) does not deadlock", arguments: TransportKind.allCases)
    func synchronousOnMainActor(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/main"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("main", forKey: "thread")
            _ = await MainActor.run { request.startSynchronous() }
            #expect(request.error == nil)
            #expect(request.responseStatusCode == 200)
            #expect(receiver.lastRequest?.form?.value("thread") == "main")
        }
    }

    @Test(
        "startAsynchronous: delegate order, blocks, bytes sent add up, progress monotonic to exactly 1.0", arguments: TransportKind.allCases
    )
    func asynchronousWithDelegateAndBlocks(kind: TransportKind) async throws {
        let file = try Support.makeFile(size: 4_000_000, seed: 5)
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/async"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            try request.addFile(file.path, forKey: "file")
            let delegate = RecordingDelegate()
            request.delegate = delegate
            let events = Locked<[String]>([])
            let sentSizes = Locked<[UInt64]>([])
            let totals = Locked<Set<UInt64>>([])
            let fractions = Locked<[Double]>([])
            request.startedBlock = { events.withLock { $0.append("started") } }
            request.bytesSentBlock = { sent, total in
                sentSizes.withLock { $0.append(sent) }
                totals.withLock { _ = $0.insert(total) }
                fractions.withLock { $0.append(request.uploadProgress.fractionCompleted) }
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                request.completionBlock = {
                    events.withLock { $0.append("completed") }
                    continuation.resume()
                }
                request.failedBlock = {
                    events.withLock { $0.append("failed") }
                    continuation.resume()
                }
                request.startAsynchronous()
            }
            let postLength = try #require(receiver.lastRequest?.contentLength)
            #expect(events.current == ["started", "completed"])
            #expect(delegate.log == ["started", "sent", "headers", "finished"])
            #expect(sentSizes.current.reduce(0, +) == UInt64(postLength))
            #expect(delegate.sentIncrements.reduce(0, +) == Int64(postLength))
            #expect(totals.current == [UInt64(postLength)])
            let seen = fractions.current
            #expect(seen.count > 1)
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 })
            #expect(request.uploadProgress.fractionCompleted == 1.0)
            #expect(request.uploadProgress.completedUnitCount == Int64(postLength))
            #expect(request.totalBytesSent == UInt64(postLength))
        }
    }

    @Test("progress reaches exactly 1.0 for a tiny body and for no body", arguments: TransportKind.allCases)
    func progressForSmallBodies(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let small = FormDataRequest(url: receiver.url("/small"))
            small.transport = kind.transport
            small.timeOutSeconds = Support.patientTimeout
            small.setPostValue("This is the request body", forKey: "b")
            let sent = Locked<UInt64>(0)
            small.bytesSentBlock = { size, _ in sent.withLock { $0 += size } }
            _ = try await small.start()
            #expect(small.uploadProgress.fractionCompleted == 1.0)
            #expect(sent.current == small.totalBytesSent)
            #expect(sent.current == UInt64("b=This%20is%20the%20request%20body".utf8.count))

            let empty = FormDataRequest(url: receiver.url("/empty"))
            empty.transport = kind.transport
            empty.timeOutSeconds = Support.patientTimeout
            empty.requestMethod = "GET"
            let response = try await empty.start()
            #expect(response.statusCode == 200)
            #expect(receiver.lastRequest?.method == "GET")
            #expect(receiver.lastRequest?.bodyBytes == 0)
            #expect(empty.uploadProgress.fractionCompleted == 1.0)
        }
    }

    @Test(
        "a timeout is retried with the same spooled body, then fails timedOut; file removed after the last try",
        arguments: TransportKind.allCases)
    func timeoutAndRetry(kind: TransportKind) async throws {
        // In this process, not in a child (Isolation): the body is under URLSessionTransport's
        // in-memory limit, so FoundationNetworking's crashing file reader is never used.
        let file = try Support.makeFile(size: 20_000, seed: 9)
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            // Answered 20 s after each attempt (it was 8 s), ten times its 2 s timeout: a timer a
            // busy machine runs late must still come before the answer; nothing waits for it.
            let request = FormDataRequest(url: receiver.url("/delay/20000"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            try request.addFile(file.path, forKey: "file")
            request.timeOutSeconds = 2
            request.numberOfTimesToRetryOnTimeout = 2
            try request.buildPostBody()
            #expect(!request.isPostBodySpooled)  // a build never spools; 20 KB go to URLSession in memory
            let delegate = RecordingDelegate()
            request.delegate = delegate
            var caught: FormDataError?
            do {
                _ = try await request.start()
            } catch {
                caught = error as? FormDataError
            }
            guard case .timedOut(let underlying)? = caught else {
                Issue.record("expected timedOut, got \(String(describing: caught))")
                return
            }
            // The send driver's idle clock, the same for every transport.
            #expect(underlying.domain == "FormDataKit")
            #expect(underlying.message == "No bytes sent or received for 2.0 s")
            #expect(request.retryCount == 2)
            #expect(request.error?.asiErrorCode == 2)
            #expect(!request.isPostBodySpooled)
            #expect(delegate.log.first == "started")
            #expect(delegate.log.last == "failed")
            #expect(delegate.log.filter { $0 == "started" }.count == 1)
            // Every try that arrived whole carried the same body. (On a loaded machine a try can
            // time out before the receiver has read all of it; FakeTransportTests count the tries
            // exactly.)
            let tries = receiver.requests
            #expect(!tries.isEmpty)
            #expect(Set(tries.compactMap(\.bodySHA256)).count == 1)
            #expect(tries.allSatisfy { $0.form?.file("file")?.sha256 == file.sha256 })
        }
    }

    @Test("cancel mid-upload fails with cancelled and removes the temp file", arguments: TransportKind.allCases)
    func cancelMidUpload(kind: TransportKind) async throws {
        // URLSession cases run in a child process: see Isolation (FoundationNetworking can crash
        // when an upload from a file is ended mid-body).
        try await Isolation.run(case: kind.rawValue, isolate: kind == .urlSession) {
            // 48 MB of generated bytes: made on a plain thread, so the cooperative pool (two threads
            // here) stays free for the receivers while both transports' cases run at once.
            let file = try await Support.blocking { try Support.makeFile(size: 48_000_000, seed: 13) }
            defer { file.remove() }
            try await Support.withReceiver { receiver in
                let request = FormDataRequest(url: receiver.url("/delay/5000?sha256=0"))
                request.transport = kind.transport
                request.timeOutSeconds = Support.patientTimeout
                try request.addFile(file.path, forKey: "file")
                try request.buildPostBody()
                #expect(!request.isPostBodySpooled)  // a build never spools
                // URLSession is handed these 48 MB as a file spooled by the send (over its 8 MiB
                // in-memory limit); curl and AsyncHTTPClient stream the parts.
                let spooled = Locked<String?>(nil)
                let delegate = RecordingDelegate(onSend: { request in
                    if request.isPostBodySpooled { spooled.withLock { $0 = request.postBodyFilePath } }
                    request.cancel()
                })
                request.delegate = delegate
                await Support.blocking { request.startSynchronous() }
                #expect(request.error == .cancelled)
                #expect(request.error?.asiErrorCode == 4)
                #expect(delegate.log.last == "failed")
                #expect(!delegate.log.contains("finished"))
                #expect(request.totalBytesSent < UInt64(file.data.count))
                #expect((spooled.current != nil) == kind.spools)
                if let path = spooled.current { #expect(!Support.exists(path)) }
            }
        }
    }

    @Test("Task cancellation cancels start()", arguments: TransportKind.allCases)
    func taskCancellation(kind: TransportKind) async throws {
        // The server holds its answer until the test ends, so the send is in flight whenever the
        // cancel comes (a timed sleep against a server delay lost that race when the concurrency
        // pool was busy: the sleep woke after the answer).
        try await HeldAnswerReceiver.with { receiver, held in
            let request = FormDataRequest(url: receiver.url("/held"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("x", forKey: "y")
            let task = Task { try await request.start() }
            #expect(await held.waitUntilArrived(), "the request never reached the server")
            task.cancel()
            let result = await task.result
            #expect(throws: FormDataError.cancelled) { try result.get() }
        }
    }

    @Test("a build failure fails the request without starting it (internal error while building)", arguments: TransportKind.allCases)
    func buildFailure(kind: TransportKind) async throws {
        let file = try Support.makeFile(size: 10, seed: 1)
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/never")!)
        request.transport = kind.transport
        request.timeOutSeconds = Support.patientTimeout
        try request.addFile(file.path, forKey: "file")
        file.remove()
        let delegate = RecordingDelegate()
        request.delegate = delegate
        await Support.blocking { request.startSynchronous() }
        guard case .internalErrorWhileBuilding(let underlying)? = request.error else {
            Issue.record("expected internalErrorWhileBuilding, got \(String(describing: request.error))")
            return
        }
        #expect(underlying == .fileNotFound(path: file.path))
        #expect(request.error?.asiErrorCode == 6)
        #expect(delegate.log == ["failed"])
    }

    @Test("a non-HTTP URL is unableToCreateRequest; a closed port is a connection failure", arguments: TransportKind.allCases)
    func badURLAndConnectionFailure(kind: TransportKind) async throws {
        let ftp = FormDataRequest(url: URL(string: "ftp://127.0.0.1/x")!)
        ftp.transport = kind.transport
        ftp.timeOutSeconds = Support.patientTimeout
        ftp.setPostValue("1", forKey: "a")
        await #expect { try await ftp.start() } throws: { error in
            guard case FormDataError.unableToCreateRequest = error else { return false }
            return true
        }
        // A port nothing listens on, held for the whole test (a port bound and released could be
        // taken by a server another test starts meanwhile).
        let refusing = try RefusingPort()
        let refused = FormDataRequest(url: refusing.url("/nothing"))
        refused.transport = kind.transport
        refused.timeOutSeconds = Support.patientTimeout
        refused.setPostValue("1", forKey: "a")
        await #expect { try await refused.start() } throws: { error in
            guard case FormDataError.connectionFailure = error else { return false }
            return true
        }
        #expect(refused.error?.asiErrorCode == 1)
        withExtendedLifetime(refusing) {}
    }

    @Test("a second start while one is in flight is refused", arguments: TransportKind.allCases)
    func oneSendAtATime(kind: TransportKind) async throws {
        // The server holds its answer until the second start has been refused: the first send is
        // in flight throughout, however late this test's task runs.
        try await HeldAnswerReceiver.with { receiver, held in
            let request = FormDataRequest(url: receiver.url("/held"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            request.setPostValue("x", forKey: "y")
            let first = Task { try await request.start() }
            guard await held.waitUntilArrived() else {
                Issue.record("the first send never reached the server: \(await first.result)")
                return
            }
            #expect(request.isExecuting)
            await #expect(throws: FormDataError.requestInProgress) { try await request.start() }
            // The refusal left the first send alone: still in flight, and it gets its answer.
            #expect(request.isExecuting)
            held.release()
            let response = try await first.value
            #expect(response.statusCode == 200)
        }
    }

    @Test("a request can be sent twice; the body is rebuilt and sent again", arguments: TransportKind.allCases)
    func sendTwice(kind: TransportKind) async throws {
        let file = try Support.makeFile(size: 50_000, seed: 21)
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/twice"))
            request.transport = kind.transport
            request.timeOutSeconds = Support.patientTimeout
            try request.addFile(file.path, forKey: "file")
            _ = try await request.start()
            _ = try await request.start()
            #expect(receiver.requests.count == 2)
            #expect(receiver.requests.allSatisfy { $0.form?.file("file")?.sha256 == file.sha256 })
        }
    }
}
