import Foundation
import FormDataKitTesting
import Testing

@testable import FormDataKit

/// Issue 55.10: progress a Linux program can follow without KVO — the request's
/// `uploadProgressBlock` and the queue's `progressBlock`, in order with the delegates.
@Suite("55.10 progress without KVO")
struct ProgressWithoutKVOTests {
    typealias Support = TransportTestSupport

    /// Records the queue's delegate calls and its progress calls in one log.
    final class Recorder: NetworkQueueDelegate, @unchecked Sendable {
        enum Entry: Equatable {
            case finished(Int)
            case queueFinished
            case progress(NetworkQueueProgress)
        }
        let log = Locked<[Entry]>([])
        func requestFinished(_ request: FormDataRequest) { log.withLock { $0.append(.finished(request.tag)) } }
        func queueFinished(_ queue: NetworkQueue) { log.withLock { $0.append(.queueFinished) } }
    }

    func request(_ url: URL, bytes: Int) -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.transport = TransportKind.curl.transport
        request.timeOutSeconds = Support.patientTimeout
        request.addData(Data(repeating: 7, count: bytes), withFileName: "a.bin", andContentType: nil, forKey: "file")
        return request
    }

    @Test("a request's block counts up to (length, length), after bytesSentBlock, and ends before requestFinished's completion")
    func requestBlock() async throws {
        try await Support.withReceiver { receiver in
            let request = request(receiver.url("/one"), bytes: 300_000)
            let calls = Locked<[String]>([])
            let sentSoFar = Locked<UInt64>(0)
            request.bytesSentBlock = { size, _ in
                sentSoFar.withLock { $0 += size }
                calls.withLock { $0.append("sent") }
            }
            request.uploadProgressBlock = { sent, length in
                #expect(sent == sentSoFar.current, "cumulative, after bytesSentBlock")
                calls.withLock { $0.append("progress \(sent)/\(length)") }
            }
            request.completionBlock = { calls.withLock { $0.append("completion") } }
            _ = try await request.start()
            let length = UInt64(request.postLength)
            let log = calls.current
            let progress = log.filter { $0.hasPrefix("progress") }
            #expect(progress.last == "progress \(length)/\(length)")
            #expect(progress.count > 1, "it moved before the end")
            #expect(log.last == "completion")
            #expect(log.filter { $0 == "progress \(length)/\(length)" }.count == 1, "the end is said once")
        }
    }

    @Test("an empty body: one call, (0, 0), when the request finishes")
    func emptyBody() async throws {
        try await Support.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/empty"))
            request.transport = TransportKind.curl.transport
            request.timeOutSeconds = Support.patientTimeout
            request.requestMethod = "PUT"
            let calls = Locked<[[UInt64]]>([])
            request.uploadProgressBlock = { sent, length in calls.withLock { $0.append([sent, length]) } }
            _ = try await request.start()
            #expect(calls.current == [[0, 0]])
        }
    }

    @Test("a queue's block hears only changes, never moves back, and reaches 1.0 (the exact batch) before queueFinished")
    func queueBlock() async throws {
        try await Support.withReceiver { receiver in
            let recorder = Recorder()
            let queue = NetworkQueue()
            queue.showAccurateProgress = true
            queue.delegate = recorder
            queue.delegateCalls = [.requestFinished, .queueFinished]
            queue.progressBlock = { progress in recorder.log.withLock { $0.append(.progress(progress)) } }
            var requests: [FormDataRequest] = []
            for tag in 1...3 {
                let request = request(receiver.url("/q\(tag)"), bytes: 100_000 * tag)
                request.tag = tag
                requests.append(request)
                try queue.addOperation(request)
            }
            await Support.blocking {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
            }
            let log = recorder.log.current
            let progress = log.compactMap { if case .progress(let value) = $0 { value } else { nil } }
            #expect(log.last == .queueFinished)
            let last = try #require(progress.last)
            let lengths = requests.reduce(0) { $0 + $1.postLength }
            #expect(last.uploadFraction == 1 && last.downloadFraction == 1)
            #expect(last.totalBytesToUpload == lengths && last.bytesUploadedSoFar == lengths)
            #expect(progress.map(\.uploadFraction) == progress.map(\.uploadFraction).sorted())
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 != $1 }, "only changes")
            #expect(progress.contains { $0.uploadFraction > 0 && $0.uploadFraction < 1 })
            #expect(queue.copy().progressBlock != nil)
        }
    }
}
