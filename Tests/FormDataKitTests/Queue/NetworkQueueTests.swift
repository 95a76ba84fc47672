@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting
import Testing

@testable import FormDataKit

/// What a queue's callers see, recorded in order.
final class QueueRecorder: NetworkQueueDelegate, @unchecked Sendable {
    let log = Locked<[String]>([])
    let names = Locked<[ObjectIdentifier: String]>([:])

    func name(_ request: FormDataRequest, _ value: String) { names.withLock { $0[ObjectIdentifier(request)] = value } }
    func record(_ entry: String) { log.withLock { $0.append(entry) } }
    private func label(_ request: FormDataRequest) -> String { names.withLock { $0[ObjectIdentifier(request)] ?? "?" } }

    // The request's delegate (`req …`) and the queue's (`queue …`).
    func requestStarted(_ request: FormDataRequest) { record("started \(label(request))") }
    func requestFinished(_ request: FormDataRequest) { record("finished \(label(request))") }
    func requestFailed(_ request: FormDataRequest) { record("failed \(label(request))") }
    func queueFinished(_ queue: NetworkQueue) { record("queueFinished") }

    var entries: [String] { log.current }
}

/// A queue delegate that records each call with the name of the thread it ran on.
final class ThreadRecordingQueueDelegate: NetworkQueueDelegate, @unchecked Sendable {
    private let log = Locked<[(entry: String, thread: String)]>([])
    private func record(_ entry: String) {
        let thread = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        log.withLock { $0.append((entry, thread.trimmingCharacters(in: .whitespacesAndNewlines))) }
    }
    func requestStarted(_ request: FormDataRequest) { record("started") }
    func requestFinished(_ request: FormDataRequest) { record("finished") }
    func requestFailed(_ request: FormDataRequest) { record("failed") }
    func queueFinished(_ queue: NetworkQueue) { record("queueFinished") }
    var calls: [(entry: String, thread: String)] { log.current }
}

/// A request delegate that records with the request's name, so request and queue entries can be told apart.
final class RequestSideRecorder: FormDataRequestDelegate, @unchecked Sendable {
    let recorder: QueueRecorder
    init(_ recorder: QueueRecorder) { self.recorder = recorder }
    private func label(_ request: FormDataRequest) -> String { recorder.names.withLock { $0[ObjectIdentifier(request)] ?? "?" } }
    func requestStarted(_ request: FormDataRequest) { recorder.record("req-delegate started \(label(request))") }
    func requestFinished(_ request: FormDataRequest) { recorder.record("req-delegate finished \(label(request))") }
    func requestFailed(_ request: FormDataRequest) { recorder.record("req-delegate failed \(label(request))") }
}

@Suite("NetworkQueue over loopback")
struct NetworkQueueTests {
    typealias Support = TransportTestSupport

    static func request(_ url: URL, _ kind: TransportKind, field: String = "x") -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.transport = kind.transport
        request.timeOutSeconds = Support.patientTimeout
        request.setPostValue(field, forKey: "field")
        return request
    }

    @Test("ASI's order: the request's delegate, its block, then the queue; queueFinished last, once", arguments: TransportKind.allCases)
    func callbackOrder(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let recorder = QueueRecorder()
            let requestSide = RequestSideRecorder(recorder)
            let queue = NetworkQueue()
            queue.delegate = recorder
            for index in 0..<3 {
                let request = Self.request(receiver.url("/q\(index)"), kind)
                recorder.name(request, "\(index)")
                request.delegate = requestSide
                request.startedBlock = { recorder.record("req-block started \(index)") }
                request.completionBlock = { recorder.record("req-block finished \(index)") }
                try queue.addOperation(request)
            }
            #expect(queue.requestsCount == 3)
            #expect(queue.isSuspended)
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            let log = recorder.entries
            #expect(log.last == "queueFinished")
            #expect(log.filter { $0 == "queueFinished" }.count == 1)
            for index in 0..<3 {
                // The queue's call for a request comes after that request's delegate and block.
                func position(_ entry: String) throws -> Int { try #require(log.firstIndex(of: entry), "\(entry) in \(log)") }
                for moment in ["started", "finished"] {
                    let order = try ["req-delegate \(moment) \(index)", "req-block \(moment) \(index)", "\(moment) \(index)"].map(position)
                    #expect(order == order.sorted(), "\(moment) \(index): \(log)")
                }
            }
            #expect(queue.requestsCount == 0)
            #expect(receiver.requests.count == 3)
        }
    }

    @Test("the first failure cancels the rest, which fail with the cancelled error and are never sent", arguments: TransportKind.allCases)
    func cancelOnFailure(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let recorder = QueueRecorder()
            let queue = NetworkQueue()
            queue.delegate = recorder
            queue.maxConcurrentOperationCount = 1
            let refusing = try RefusingPort()  // held until the test ends: no other server takes the port
            let failing = Self.request(refusing.url("/refused"), kind)
            recorder.name(failing, "failing")
            try queue.addOperation(failing)
            let rest = (0..<3).map { Self.request(receiver.url("/never\($0)"), kind) }
            for (index, request) in rest.enumerated() {
                recorder.name(request, "\(index)")
                try queue.addOperation(request)
            }
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            #expect(failing.error?.asiErrorCode == 1)
            for request in rest { #expect(request.error == .cancelled) }
            #expect(receiver.requests.isEmpty)
            #expect(Set(recorder.entries) == ["started failing", "failed failing", "failed 0", "failed 1", "failed 2", "queueFinished"])
            #expect(Array(recorder.entries.prefix(2)) == ["started failing", "failed failing"])
            #expect(recorder.entries.last == "queueFinished")
            #expect(queue.uploadProgress.fractionCompleted == 1.0)
            withExtendedLifetime(refusing) {}
        }
    }

    @Test("with shouldCancelAllRequestsOnFailure off, the others are sent and finish", arguments: TransportKind.allCases)
    func failureWithoutCancel(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let queue = NetworkQueue()
            queue.shouldCancelAllRequestsOnFailure = false
            queue.maxConcurrentOperationCount = 1
            let refusing = try RefusingPort()  // held until the test ends: no other server takes the port
            let failing = Self.request(refusing.url("/refused"), kind)
            try queue.addOperation(failing)
            let rest = (0..<3).map { Self.request(receiver.url("/sent\($0)"), kind) }
            for request in rest { try queue.addOperation(request) }
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            #expect(failing.error != nil)
            for request in rest { #expect(request.error == nil && request.responseStatusCode == 200) }
            #expect(receiver.requests.count == 3)
            withExtendedLifetime(refusing) {}
        }
    }

    @Test("accurate progress: the bodies' exact lengths, sized without building; monotonic; exactly 1.0", arguments: TransportKind.allCases)
    func accurateProgress(kind: TransportKind) async throws {
        let files = try (0..<3).map { try Support.makeFile(size: 400_000 + $0 * 1000, seed: UInt64($0), name: "p\($0).jpg") }
        defer { files.forEach { $0.remove() } }
        try await Support.withReceiver { receiver in
            let queue = NetworkQueue()
            queue.showAccurateProgress = true
            queue.maxConcurrentOperationCount = 2
            let fractions = Locked<[Double]>([])
            var requests: [FormDataRequest] = []
            for file in files {
                let request = Self.request(receiver.url("/upload"), kind)
                try request.addFile(file.path, forKey: "photo")
                request.bytesSentBlock = { _, _ in fractions.withLock { $0.append(queue.uploadProgress.fractionCompleted) } }
                try queue.addOperation(request)
                // Sized, not built: no body is held while the request waits.
                #expect(request.bodySource == nil)
                requests.append(request)
            }
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            let lengths = requests.map(\.postLength)
            #expect(queue.totalBytesToUpload == lengths.reduce(0, +))
            #expect(queue.bytesUploadedSoFar == queue.totalBytesToUpload)
            #expect(queue.uploadProgress.fractionCompleted == 1.0)
            #expect(queue.uploadProgress.completedUnitCount == Int64(lengths.reduce(0, +)))
            #expect(queue.downloadProgress.fractionCompleted == 1.0)
            #expect(queue.bytesDownloadedSoFar == queue.totalBytesToDownload)
            let seen = fractions.current
            #expect(!seen.isEmpty)
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "\(seen)")
            #expect(receiver.requests.count == 3)
        }
    }

    @Test("a request added while the queue runs is picked up; the queue finishes once, after it", arguments: TransportKind.allCases)
    func addedWhileRunning(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let recorder = QueueRecorder()
            let queue = NetworkQueue()
            let late = Self.request(receiver.url("/late"), kind)
            recorder.name(late, "late")
            let first = Self.request(receiver.url("/first"), kind)
            recorder.name(first, "first")
            // Added from the first request's own completion, while the queue still counts it.
            first.completionBlock = { try? queue.addOperation(late) }
            queue.delegate = recorder
            try queue.addOperation(first)
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            #expect(late.responseStatusCode == 200)
            #expect(recorder.entries.filter { $0 == "queueFinished" }.count == 1)
            #expect(recorder.entries.last == "queueFinished")
            #expect(receiver.requests.map(\.path).sorted() == ["/first", "/late"])
        }
    }

    @Test("suspended: nothing starts; reset cancels every request without calling the forgotten delegate")
    func suspendedAndReset() async throws {
        try await Support.withReceiver { receiver in
            let recorder = QueueRecorder()
            let queue = NetworkQueue.queue()
            queue.delegate = recorder
            let failed = Locked(0)
            let requests = (0..<3).map { Self.request(receiver.url("/held\($0)"), .curl) }
            for request in requests {
                request.failedBlock = { failed.withLock { $0 += 1 } }
                try queue.addOperation(request)
            }
            #expect(queue.core.withLock { $0.machine.running } == 0)
            queue.reset()
            #expect(queue.isSuspended)
            #expect(queue.delegate == nil)
            await Support.blocking { queue.waitUntilAllOperationsAreFinished() }
            for request in requests { #expect(request.error == .cancelled) }
            #expect(failed.current == 3)
            #expect(receiver.requests.isEmpty)
            #expect(recorder.entries.isEmpty)
        }
    }

    @Test("a waiting request's own cancel fails it without sending it; the events sequence tells the same story")
    func cancelWhileWaitingAndEvents() async throws {
        try await Support.withReceiver { receiver in
            let queue = NetworkQueue()
            // As in ASI, a cancelled request is a failure: with the default it would cancel the rest.
            queue.shouldCancelAllRequestsOnFailure = false
            let events = queue.events
            let waiting = Self.request(receiver.url("/cancelled"), .curl)
            let sent = Self.request(receiver.url("/sent"), .curl)
            try queue.addOperation(sent)
            try queue.addOperation(waiting)
            waiting.cancel()
            queue.go()
            var seen: [String] = []
            for await event in events {
                switch event {
                case .requestStarted(let request): seen.append("started \(request === sent ? "sent" : "other")")
                case .receivedResponseHeaders: seen.append("headers")
                case .requestFinished(let request): seen.append("finished \(request === sent ? "sent" : "other")")
                case .requestFailed(let request, let error):
                    seen.append("failed \(request === waiting ? "waiting" : "other") \(error == .cancelled)")
                case .queueFinished: seen.append("queueFinished")
                }
                if case .queueFinished = event { break }
            }
            // The cancelled request fails on its own, unordered with the other's send.
            #expect(seen.filter { $0 != "failed waiting true" } == ["started sent", "headers", "finished sent", "queueFinished"])
            #expect(seen.filter { $0 == "failed waiting true" }.count == 1)
            #expect(receiver.requests.map(\.path) == ["/sent"])
            #expect(waiting.error == .cancelled)
        }
    }

    @Test(
        "with nothing of the requests' own to call, the queue keeps count on the reporting thread and its delegate still runs off the transports' threads",
        arguments: TransportKind.allCases)
    func queueDelegateOffTransportThreads(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let recorder = ThreadRecordingQueueDelegate()
            let queue = NetworkQueue()
            queue.delegate = recorder
            queue.showAccurateProgress = true
            queue.maxConcurrentOperationCount = 2
            // No delegate and no block on the requests: what the queue hears of them is all internal.
            for index in 0..<6 { try queue.addOperation(Self.request(receiver.url("/t\(index)"), kind, field: "\(index)")) }
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            let calls = recorder.calls
            #expect(calls.count(where: { $0.entry == "started" }) == 6)
            #expect(calls.count(where: { $0.entry == "finished" }) == 6)
            #expect(calls.last?.entry == "queueFinished")
            let onTransportThreads = calls.filter { $0.thread.hasPrefix("FDK.") || $0.thread.hasPrefix("NIO-ELT") }
            #expect(onTransportThreads.isEmpty, "\(onTransportThreads)")
            #expect(queue.uploadProgress.fractionCompleted == 1.0)
            #expect(queue.requestsCount == 0)
            #expect(receiver.requests.count == 6)
        }
    }

    @Test("copy keeps the delegate and settings, not the requests; a new queue is suspended")
    func copyQueue() throws {
        let recorder = QueueRecorder()
        let queue = NetworkQueue()
        queue.delegate = recorder
        queue.shouldCancelAllRequestsOnFailure = false
        queue.showAccurateProgress = true
        queue.userInfo = ["batch": 7]
        try queue.addOperation(FormDataRequest(url: URL(string: "http://127.0.0.1:9/x")!))
        let copied = queue.copy()
        #expect(copied.delegate === recorder)
        #expect(!copied.shouldCancelAllRequestsOnFailure)
        #expect(copied.showAccurateProgress)
        #expect(copied.userInfo?["batch"] as? Int == 7)
        #expect(copied.requestsCount == 0)
        #expect(copied.isSuspended)
        #expect(NetworkQueue().maxConcurrentOperationCount == 4)
        #expect(NetworkQueue().shouldCancelAllRequestsOnFailure)
        queue.reset()
    }
}
