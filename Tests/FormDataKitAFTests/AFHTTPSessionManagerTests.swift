import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// What a session-manager call ended with.
enum Outcome: @unchecked Sendable {
    case success(AFHTTPSessionDataTask?, Any?)
    case failure(AFHTTPSessionDataTask?, any Error)

    var responseObject: Any? {
        if case .success(_, let object) = self { return object }
        return nil
    }

    var error: (any Error)? {
        if case .failure(_, let error) = self { return error }
        return nil
    }
}

/// Runs `start` with success and failure callbacks and waits for one of them.
func outcome(
    _ start: (@escaping AFHTTPSessionManager.Success, @escaping AFHTTPSessionManager.Failure) -> AFHTTPSessionDataTask?
) async -> (task: AFHTTPSessionDataTask?, outcome: Outcome) {
    let box = Locked<AFHTTPSessionDataTask?>(nil)
    let result: Outcome = await withCheckedContinuation { continuation in
        let task = start(
            { task, object in continuation.resume(returning: .success(task, object)) },
            { task, error in continuation.resume(returning: .failure(task, error)) })
        box.withLock { $0 = task }
    }
    return (box.current, result)
}

/// The ported request-building, base-URL and multipart parts of `AFHTTPSessionManagerTests`,
/// against the embedded receiver instead of httpbin. Serialized: the spool-cleanup check looks
/// at the temporary directory.
@Suite("AFHTTPSessionManager (T-SM)", .serialized)
struct AFHTTPSessionManagerTests {
    /// One transport (one URLSession) for this suite's sends, apart from the shared one the
    /// transport's own tests load with large, cancelled and timed-out uploads.
    static let transport = URLSessionTransport()

    /// A manager for `baseURL` sending through the suite's transport.
    func manager(_ baseURL: URL) -> AFHTTPSessionManager {
        AFHTTPSessionManager(baseURL: baseURL, sessionConfiguration: nil, transport: Self.transport)
    }

    // MARK: - Against the embedded receiver

    @Test("a per-request header whose name is not a token is refused before anything goes out")
    func perRequestHeaderInjectionRefused() async throws {
        // (Foundation's URLRequest already drops a value with CR or LF; a name with a space or
        // a colon it keeps, and it would corrupt the header block.)
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let (_, result) = await outcome { success, failure in
            manager.get(
                "get", parameters: nil, headers: ["X-Evil: 1\r\nX": "v"], progress: nil,
                success: success, failure: failure)
        }
        await receiver.stop()
        #expect(result.error as? FormDataError == .invalidRequestHeader(name: "X-Evil: 1\r\nX", value: "v"))
        #expect(receiver.requests.isEmpty)
    }

    @Test func getSucceedsWithAResponseObject() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let (task, result) = await outcome { success, failure in
            manager.get("get", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        await receiver.stop()
        #expect(result.error == nil)
        #expect(result.responseObject is [String: Any])
        #expect(task?.response?.statusCode == 200)
        #expect(receiver.lastRequest?.method == "GET")
        #expect(receiver.lastRequest?.path == "/get")
    }

    @Test func headSucceedsWithTheTask() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let result: AFHTTPSessionDataTask? = await withCheckedContinuation { continuation in
            manager.head(
                "get", parameters: nil, headers: nil, success: { task in continuation.resume(returning: task) },
                failure: { _, _ in continuation.resume(returning: nil) })
        }
        await receiver.stop()
        #expect(result != nil)
        #expect(receiver.lastRequest?.method == "HEAD")
    }

    @Test func postSendsAFormAndThePerRequestHeader() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        manager.requestSerializer.setValue("default value", forHTTPHeaderField: "field")
        let (task, result) = await outcome { success, failure in
            manager.post(
                "post", parameters: ["key": "value"], headers: ["field": "value"], progress: nil, success: success, failure: failure)
        }
        await receiver.stop()
        #expect(result.error == nil)
        #expect(task?.originalRequest.value(forHTTPHeaderField: "field") == "value")
        #expect(receiver.lastRequest?.header("field") == "value")
        #expect(receiver.lastRequest?.form?.value("key") == "value")
        #expect(receiver.lastRequest?.header("Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func postWithConstructingBodySendsExactly244Bytes() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        manager.requestSerializer.setValue("default value", forHTTPHeaderField: "field")
        let (task, result) = await outcome { success, failure in
            manager.post(
                "post", parameters: ["key": "value"], headers: ["field": "value"],
                constructingBodyWith: { form in
                    form.appendPart(withFileData: Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
                }, progress: nil, success: success, failure: failure)
        }
        await receiver.stop()
        #expect(result.error == nil)
        #expect(task?.originalRequest.value(forHTTPHeaderField: "field") == "value")
        let received = try #require(receiver.lastRequest)
        #expect(received.parseError == nil)
        #expect(received.form?.file("DataName")?.data == Data("Data".utf8))
        #expect(received.form?.file("DataName")?.fileName == "DataFileName")
        #expect(received.form?.value("key") == "value")
        #expect(received.bodyBytes == 244)
        #expect(received.contentLength == 244)
        #expect(received.header("Transfer-Encoding") == nil)
        #expect(received.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=Boundary+") == true)
        #expect(!TemporaryStorage.currentFiles().contains { $0.contains("af-upload") })
    }

    @Test func putAndPatchSendTheFormAndDeleteTheQuery() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let put = await outcome { success, failure in
            manager.put("put", parameters: ["key": "value"], headers: ["field": "value"], success: success, failure: failure)
        }
        #expect(put.outcome.error == nil)
        #expect(receiver.lastRequest?.method == "PUT")
        #expect(receiver.lastRequest?.form?.value("key") == "value")
        #expect(receiver.lastRequest?.header("field") == "value")
        let patch = await outcome { success, failure in
            manager.patch("patch", parameters: ["key": "value"], headers: ["field": "value"], success: success, failure: failure)
        }
        #expect(patch.outcome.error == nil)
        #expect(receiver.lastRequest?.method == "PATCH")
        #expect(receiver.lastRequest?.form?.value("key") == "value")
        let delete = await outcome { success, failure in
            manager.delete("delete", parameters: ["key": "value"], headers: ["field": "value"], success: success, failure: failure)
        }
        await receiver.stop()
        #expect(delete.outcome.error == nil)
        #expect(delete.task?.originalRequest.url?.query == "key=value")
        #expect(receiver.lastRequest?.method == "DELETE")
        #expect(receiver.lastRequest?.bodyBytes == 0)
        #expect(receiver.lastRequest?.header("field") == "value")
    }

    @Test func statusCodesDecideSuccessAndFailure() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let ok = await outcome { success, failure in
            manager.get("status/200", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(ok.outcome.error == nil)
        let notFound = await outcome { success, failure in
            manager.get("status/404", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        let error = notFound.outcome.error as NSError?
        #expect(error?.domain == AFURLResponseSerializationErrorDomain)
        #expect(error?.code == -1011)
        #expect(error?.localizedDescription.hasSuffix("(404)") == true)
        #expect(notFound.task?.response?.statusCode == 404)
        let noContent = await outcome { success, failure in
            manager.get("status/204", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        await receiver.stop()
        guard case .success(_, let object) = noContent.outcome else {
            Issue.record("204 should succeed")
            return
        }
        #expect(object == nil)
    }

    @Test func hiddenBasicAuthentication() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        manager.requestSerializer.setAuthorizationHeaderFieldWithUsername("user", password: "password")
        let result = await outcome { success, failure in
            manager.get("auth/user/password", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        await receiver.stop()
        #expect(result.outcome.error == nil)
        #expect(receiver.lastRequest?.header("Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
    }

    @Test func uploadProgressIsReportedForPOST() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let fractions = Locked<[Double]>([])
        let result = await outcome { success, failure in
            manager.post(
                "post", parameters: TestSupport.progressPayload, headers: nil,
                progress: { progress in
                    fractions.withLock { $0.append(progress.fractionCompleted) }
                }, success: success, failure: failure)
        }
        await receiver.stop()
        #expect(result.outcome.error == nil)
        #expect(fractions.current.last == 1.0)
        #expect(receiver.lastRequest?.bodyBytes == 20005)
    }

    @Test func uploadProgressIsReportedForStreamingPost() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let fractions = Locked<[Double]>([])
        let payload = Data(TestSupport.progressPayload.utf8)
        let result = await outcome { success, failure in
            manager.post(
                "post", parameters: nil, headers: nil,
                constructingBodyWith: { form in
                    form.appendPart(withFileData: payload, name: "AFNetworking", fileName: "AFNetworking", mimeType: "text/html")
                },
                progress: { progress in
                    fractions.withLock { $0.append(progress.fractionCompleted) }
                }, success: success, failure: failure)
        }
        await receiver.stop()
        #expect(result.outcome.error == nil)
        #expect(fractions.current.last == 1.0)
        #expect(receiver.lastRequest?.bodyBytes == 20171)
        #expect(receiver.lastRequest?.form?.file("AFNetworking")?.data == payload)
    }

    @Test func legacyShapesAndTheCompletionQueue() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL.appendingPathComponent("v3"))
        let queue = DispatchQueue(label: "FormDataKitAFTests.completion")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        manager.completionQueue = queue
        let onQueue = Locked(false)
        let result = await outcome { success, failure in
            manager.post(
                "upload", parameters: ["a": "1"],
                constructingBodyWith: { form in
                    form.appendPart(withForm: Data("2".utf8), name: "b")
                }, progress: nil,
                success: { task, object in
                    onQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) == 7 }
                    success(task, object)
                }, failure: failure)
        }
        await receiver.stop()
        #expect(result.outcome.error == nil)
        #expect(onQueue.current)
        #expect(receiver.lastRequest?.path == "/v3/upload")
        #expect(receiver.lastRequest?.form?.value("a") == "1")
        #expect(receiver.lastRequest?.form?.value("b") == "2")
    }

    @Test func connectionFailuresGoToFailureWithTheTask() async throws {
        // A port held bound and never listening: a stopped receiver's port could be taken by a
        // server another test starts meanwhile (a busy clean clone got a reset, -1005, from one).
        let refusing = try RefusingPort()
        let manager = self.manager(URL(string: "http://127.0.0.1:\(refusing.port)/")!)
        let result = await outcome { success, failure in
            manager.get("get", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        guard case .failure(let task, let error) = result.outcome else {
            Issue.record("expected a connection failure")
            return
        }
        #expect(task != nil)
        // As AFNetworking reported it: NSURLErrorDomain, whichever transport sent the request.
        let ns = error as NSError
        #expect(ns.domain == NSURLErrorDomain)
        #expect(ns.code == NSURLErrorCannotConnectToHost, "\(ns)")
        #expect((error as? AFNetworkError).map { if case .connectionFailure = $0.underlying { true } else { false } } == true)
        #expect(task?.state == .completed)
        withExtendedLifetime(refusing) {}
    }

    @Test func aTimeoutIsNSURLErrorTimedOutOverCurl() async throws {
        let receiver = try await FormReceiver.start()
        let manager = AFHTTPSessionManager(baseURL: receiver.baseURL, sessionConfiguration: nil, transport: CurlTransport())
        manager.requestSerializer.timeoutInterval = 0.5
        let result = await outcome { success, failure in
            // Answered 10 s after the 0.5 s timeout would fire (it was 3 s): a timer a busy
            // machine runs late must still come before the answer. Nothing waits for the answer.
            manager.get("delay/10000", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        await receiver.stop()
        let ns = try #require(result.outcome.error.map { $0 as NSError })
        #expect(ns.domain == NSURLErrorDomain)
        #expect(ns.code == NSURLErrorTimedOut)
        #expect((ns.userInfo[NSUnderlyingErrorKey] as? NSError)?.domain == "ASIHTTPRequestErrorDomain")
    }

    /// The README's example, against the receiver.
    @Test func readmeExampleWorks() async throws {
        let receiver = try await FormReceiver.start()
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try TestSupport.write(Data(repeating: 0xD8, count: 4096), named: "photo.jpg", in: directory)
        let manager = self.manager(receiver.url("/api/"))
        let done: Bool = await withCheckedContinuation { continuation in
            manager.post(
                "upload", parameters: ["user": "ben"], headers: nil,
                constructingBodyWith: { form in
                    try form.appendPart(withFileURL: photo, name: "photo")
                }, progress: nil,
                success: { _, response in
                    _ = response
                    continuation.resume(returning: true)
                },
                failure: { _, error in
                    _ = error
                    continuation.resume(returning: false)
                })
        }
        await receiver.stop()
        #expect(done)
        #expect(receiver.lastRequest?.path == "/api/upload")
        #expect(receiver.lastRequest?.form?.value("user") == "ben")
        #expect(receiver.lastRequest?.form?.file("photo")?.size == 4096)
        #expect(receiver.lastRequest?.form?.file("photo")?.contentType == "image/jpeg")
        // A file part is spooled and uploaded from the spool: exact length, no chunking, no file left.
        #expect(receiver.lastRequest?.contentLength == receiver.lastRequest?.bodyBytes)
        #expect(receiver.lastRequest?.header("Transfer-Encoding") == nil)
        #expect(!TemporaryStorage.currentFiles().contains { $0.contains("af-upload") })
    }

    @Test func cancellingReportsCancelledToFailure() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        let suspended = await outcome { success, failure in
            let task = manager.dataTask(
                withHTTPMethod: "GET", urlString: "get", parameters: nil, headers: nil,
                uploadProgress: nil, downloadProgress: nil, success: success, failure: failure)
            task?.cancel()
            return task
        }
        #expect(suspended.outcome.error.map { $0 as NSError }?.domain == NSURLErrorDomain)
        #expect(suspended.outcome.error.map { $0 as NSError }?.code == NSURLErrorCancelled)
        #expect((suspended.outcome.error as? AFNetworkError)?.underlying == .cancelled)
        #expect(suspended.task?.state == .completed)
        let running = await outcome { success, failure in
            let task = manager.get("delay/5000", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
            task?.cancel()
            return task
        }
        await receiver.stop()
        #expect((running.outcome.error as? AFNetworkError)?.underlying == .cancelled)
        #expect(running.outcome.error.map { $0 as NSError }?.code == NSURLErrorCancelled)
        #expect(running.task?.state == .completed)
        #expect(!TemporaryStorage.currentFiles().contains { $0.contains("af-upload") })
    }
}
