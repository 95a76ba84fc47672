@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTesting
import Testing

@testable import FormDataKit

@Suite("FormDataRequest as an Operation")
struct RequestOperationTests {
    typealias Support = TransportTestSupport

    @Test("a plain OperationQueue sends requests; the operation finishes after the request's callbacks", arguments: TransportKind.allCases)
    func onOperationQueue(kind: TransportKind) async throws {
        try await Support.withReceiver { receiver in
            let operations = OperationQueue()
            operations.maxConcurrentOperationCount = 2
            let finished = Locked(0)
            let requests = (0..<3).map { index -> FormDataRequest in
                let request = NetworkQueueTests.request(receiver.url("/op\(index)"), kind)
                request.completionBlock = { finished.withLock { $0 += 1 } }
                return request
            }
            for request in requests { operations.addOperation(request) }
            await Support.blocking { operations.waitUntilAllOperationsAreFinished() }
            #expect(finished.current == 3)
            #expect(requests.allSatisfy { $0.responseStatusCode == 200 })
            #expect(receiver.requests.count == 3)
        }
    }

    @Test("cancelled before it starts: the request fails with the cancelled error, unsent, its failure reported")
    func cancelBeforeStart() async throws {
        try await Support.withReceiver { receiver in
            let operations = OperationQueue()
            operations.isSuspended = true
            let request = NetworkQueueTests.request(receiver.url("/never"), .curl)
            let failed = Locked(false)
            request.failedBlock = { failed.withLock { $0 = true } }
            let operation = request.makeOperation()
            operations.addOperation(operation)
            operation.cancel()
            operations.isSuspended = false
            await Support.blocking { operations.waitUntilAllOperationsAreFinished() }
            #expect(operation.isFinished)
            #expect(request.error == .cancelled)
            #expect(failed.current)
            #expect(receiver.requests.isEmpty)
        }
    }
}
