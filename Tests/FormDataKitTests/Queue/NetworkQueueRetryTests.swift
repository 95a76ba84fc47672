@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTesting
import Testing

@testable import FormDataKit

@Suite("NetworkQueue progress across retries")
struct NetworkQueueRetryTests {
    typealias Support = TransportTestSupport

    @Test(
        "a body sent twice (a timeout, then a retry) is counted once: monotonic, exactly the total, 1.0 at the end",
        arguments: TransportKind.allCases)
    func retriedBodyCountedOnce(kind: TransportKind) async throws {
        let file = try Support.makeFile(size: 200_000, seed: 9, name: "retry.bin")
        defer { file.remove() }
        try await Support.withReceiver { receiver in
            let queue = NetworkQueue()
            queue.showAccurateProgress = true
            // The receiver reads the whole body, then waits longer than the idle timeout: every
            // attempt sends the whole body and times out. 10 s, ten times the 1 s timeout (it was
            // 3 s): a timer a busy machine runs late must still come before the answer; nothing
            // waits for the answer.
            let request = FormDataRequest(url: receiver.url("/delay/10000"))
            request.transport = kind.transport
            request.timeOutSeconds = 1
            request.numberOfTimesToRetryOnTimeout = 1
            try request.addFile(file.path, forKey: "file")
            let fractions = Locked<[Double]>([])
            let sent = Locked<Int64>(0)
            let delegate = SentBytesRecorder(sent: sent, fractions: fractions, queue: queue)
            request.delegate = delegate
            try queue.addOperation(request)
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            #expect(request.error?.asiErrorCode == 2)
            #expect(request.retryCount == 1)
            let seen = fractions.current
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "\(seen)")
            #expect(queue.bytesUploadedSoFar == queue.totalBytesToUpload)
            #expect(queue.totalBytesToUpload == request.postLength)
            #expect(queue.uploadProgress.fractionCompleted == 1.0)
            _ = delegate
        }
    }
}

/// Records the queue's upload fraction at each of a request's progress reports.
final class SentBytesRecorder: FormDataRequestDelegate, @unchecked Sendable {
    let sent: Locked<Int64>
    let fractions: Locked<[Double]>
    let queue: NetworkQueue
    init(sent: Locked<Int64>, fractions: Locked<[Double]>, queue: NetworkQueue) {
        self.sent = sent
        self.fractions = fractions
        self.queue = queue
    }
    func request(_ request: FormDataRequest, didSendBytes bytes: Int64) {
        sent.withLock { $0 += bytes }
        fractions.withLock { $0.append(queue.uploadProgress.fractionCompleted) }
    }
}
