import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// AFNetworking 2's operations over loopback: the operation manager, an operation's blocks,
/// pause/resume, and a batch's progress and completion — on FormDataKit's send driver.
@Suite("AF 2 operations")
struct AFOperationTests {
    static func blocking(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                work()
                continuation.resume()
            }
        }
    }

    @Test("the manager's multipart POST: the form arrives, success gets the JSON object; the operation ran on operationQueue")
    func managerMultipartPost() async throws {
        try await TestSupport.withReceiver { receiver in
            let manager = AFHTTPRequestOperationManager(baseURL: receiver.baseURL)
            let started = Locked(0)
            let observer = NotificationCenter.default.addObserver(forName: .AFNetworkingOperationDidStart, object: nil, queue: nil) { _ in
                started.withLock { $0 += 1 }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            let object: Any? = try await withCheckedThrowingContinuation { continuation in
                let operation = manager.post(
                    "upload", parameters: ["album": "2026"],
                    constructingBodyWith: { form in
                        form.appendPart(withFileData: Data("photo bytes".utf8), name: "photo", fileName: "p.jpg", mimeType: "image/jpeg")
                    },
                    success: { _, object in continuation.resume(returning: ObjectBox(object)) },
                    failure: { _, error in continuation.resume(throwing: error) })
                #expect(operation != nil)
            }.value
            let json = try #require(object as? [String: Any])
            #expect(json["path"] as? String == "/upload")
            let form = try #require(receiver.lastRequest?.form)
            #expect(form.value("album") == "2026")
            #expect(form.file("photo")?.data == Data("photo bytes".utf8))
            #expect(started.current >= 1)
            #expect(manager.operationQueue.operationCount <= 1)
        }
    }

    @Test("an operation on a plain queue: progress blocks, responseData/String/Object, waitUntilFinished")
    func operationBlocks() async throws {
        try await TestSupport.withReceiver { receiver in
            var request = URLRequest(url: receiver.url("/echo"))
            request.httpMethod = "POST"
            request.httpBody = Data(repeating: 0x61, count: 300_000)
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            let operation = AFHTTPRequestOperation(request: request)
            operation.responseSerializer = AFJSONResponseSerializer.serializer()
            let written = Locked<Int64>(0)
            let read = Locked<Int64>(0)
            operation.setUploadProgressBlock { bytes, total, expected in
                written.withLock { $0 += Int64(bytes) }
                #expect(expected == 300_000 && total <= expected)
            }
            operation.setDownloadProgressBlock { bytes, _, _ in read.withLock { $0 += Int64(bytes) } }
            let queue = OperationQueue()
            queue.addOperation(operation)
            await Self.blocking { operation.waitUntilFinished() }
            #expect(operation.isFinished)
            #expect(operation.error == nil)
            #expect(written.current == 300_000)
            #expect(read.current == Int64(operation.responseData?.count ?? -1))
            #expect(operation.response?.statusCode == 200)
            #expect(
                operation.responseString?.contains("\"path\":\"\\/echo\"") == true || operation.responseString?.contains("/echo") == true)
            #expect((operation.responseObject as? [String: Any])?["bodyBytes"] as? Int == 300_000)
        }
    }

    @Test("pause stops the transfer, resume sends the request again; it finishes once")
    func pauseAndResume() async throws {
        try await TestSupport.withReceiver { receiver in
            // Answered 2 s after it arrives (it was 0.3 s): the pause right after the start must
            // come before the answer even when a busy machine deschedules this thread between them.
            let operation = AFHTTPRequestOperation(request: URLRequest(url: receiver.url("/delay/2000")))
            let finishes = Locked(0)
            let observer = NotificationCenter.default.addObserver(forName: .AFNetworkingOperationDidFinish, object: operation, queue: nil) {
                _ in
                finishes.withLock { $0 += 1 }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            operation.start()
            operation.pause()
            #expect(operation.isPaused)
            #expect(!operation.isExecuting && !operation.isFinished)
            operation.resume()
            #expect(!operation.isPaused)
            await Self.blocking { operation.waitUntilFinished() }
            #expect(operation.error == nil)
            #expect(operation.response?.statusCode == 200)
            // One finish notice for the pause, one for the end.
            #expect(finishes.current == 2)
        }
    }

    @Test("cancel before start: failure with NSURLErrorCancelled, nothing sent")
    func cancelBeforeStart() async throws {
        try await TestSupport.withReceiver { receiver in
            let operation = AFHTTPRequestOperation(request: URLRequest(url: receiver.url("/never")))
            let failed = Locked<(any Error)?>(nil)
            let done = DispatchSemaphore(value: 0)
            operation.setCompletionBlockWithSuccess(
                { _, _ in done.signal() },
                failure: { _, error in
                    failed.withLock { $0 = error }
                    done.signal()
                })
            operation.cancel()
            let queue = OperationQueue()
            queue.addOperation(operation)
            await Self.blocking { done.wait() }
            #expect(failed.current.map { $0 as NSError }?.code == NSURLErrorCancelled)
            #expect(receiver.requests.isEmpty)
        }
    }

    @Test("a batch: progress counts finished operations 1…n in order, then the completion, once")
    func batch() async throws {
        try await TestSupport.withReceiver { receiver in
            let operations = (0..<4).map { AFHTTPRequestOperation(request: URLRequest(url: receiver.url("/batch\($0)"))) }
            let log = Locked<[String]>([])
            let done = DispatchSemaphore(value: 0)
            let batch = AFURLConnectionOperation.batchOfRequestOperations(
                operations,
                progressBlock: { finished, total in log.withLock { $0.append("\(finished)/\(total)") } },
                completionBlock: { finished in
                    log.withLock { $0.append("done \(finished.count)") }
                    done.signal()
                })
            #expect(batch.count == 5)
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 2
            for operation in batch { queue.addOperation(operation) }
            await Self.blocking { done.wait() }
            #expect(log.current == ["1/4", "2/4", "3/4", "4/4", "done 4"])
            #expect(receiver.requests.count == 4)
        }
    }
}

/// A response object handed across a continuation.
struct ObjectBox: @unchecked Sendable {
    let value: Any?
    init(_ value: Any?) { self.value = value }
}
