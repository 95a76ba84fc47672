import Foundation
import FormDataKitTesting
import Testing

@testable import FormDataKit

/// One object as both the requests' and the queue's delegate (issue 55.2), implementing only
/// what it needs; the queue calls only what `delegateCalls` asks for (issue 55.3).
final class UploadController: FormDataRequestDelegate, NetworkQueueDelegate, @unchecked Sendable {
    let log = Locked<[String]>([])
    func requestFinished(_ request: FormDataRequest) { log.withLock { $0.append("finished \(request.tag)") } }
    func queueFinished(_ queue: NetworkQueue) { log.withLock { $0.append("queueFinished") } }
}

@Suite("55.2/55.3 one object as request and queue delegate")
struct RequestAndQueueDelegateTests {
    typealias Support = TransportTestSupport

    func run(_ calls: NetworkQueue.DelegateCalls?, receiver: FormReceiver) async throws -> [String] {
        let controller = UploadController()
        let queue = NetworkQueue()
        queue.delegate = controller
        if let calls { queue.delegateCalls = calls }
        for tag in 1...3 {
            let request = FormDataRequest(url: receiver.url("/upload\(tag)"))
            request.transport = TransportKind.curl.transport
            request.timeOutSeconds = Support.patientTimeout
            request.tag = tag
            request.delegate = controller
            request.setPostValue("x", forKey: "field")
            try queue.addOperation(request)
        }
        await Support.blocking {
            queue.go()
            queue.waitUntilAllOperationsAreFinished()
        }
        return controller.log.current
    }

    @Test("with delegateCalls = [.queueFinished] each request is finished once, then the queue")
    func onlyWhatWasAskedFor() async throws {
        try await Support.withReceiver { receiver in
            let log = try await run([.queueFinished], receiver: receiver)
            #expect(log.filter { $0.hasPrefix("finished") }.sorted() == ["finished 1", "finished 2", "finished 3"])
            #expect(log.last == "queueFinished")
            #expect(log.count == 4)
        }
    }

    @Test("the default, every call: the shared method hears each request twice (request, then queue)")
    func defaultCallsEverything() async throws {
        try await Support.withReceiver { receiver in
            let log = try await run(nil, receiver: receiver)
            for tag in 1...3 { #expect(log.filter { $0 == "finished \(tag)" }.count == 2) }
            #expect(log.filter { $0 == "queueFinished" }.count == 1)
        }
    }

    @Test("a queue delegate call left out is not made; events still carry it; copy keeps the set")
    func eventsCarryEverything() async throws {
        try await Support.withReceiver { receiver in
            let controller = UploadController()
            let queue = NetworkQueue()
            queue.delegate = controller
            queue.delegateCalls = [.requestStarted]
            #expect(queue.copy().delegateCalls == [.requestStarted])
            let events = queue.events
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = TransportKind.curl.transport
            request.timeOutSeconds = Support.patientTimeout
            try queue.addOperation(request)
            queue.go()
            var seen: [String] = []
            for await event in events {
                switch event {
                case .requestStarted: seen.append("started")
                case .requestFinished: seen.append("finished")
                case .queueFinished: seen.append("queueFinished")
                default: break
                }
                if case .queueFinished = event { break }
            }
            #expect(seen == ["started", "finished", "queueFinished"])
            #expect(controller.log.current.isEmpty)
        }
    }
}
