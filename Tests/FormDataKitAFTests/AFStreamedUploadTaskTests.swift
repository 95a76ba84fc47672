import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `AFHTTPSessionManager.uploadTask(withStreamedRequest:progress:completionHandler:)` (issue 55,
/// point 6): a request the serializer built with a multipart body stream, sent by the manager
/// with the bytes the serializer wrote — what the documented route (write the stream to a file,
/// then `URLSession.uploadTask(with:fromFile:)`) sends — and their exact `Content-Length`, over
/// the default transport and over URLSession. Checked on the receiver's raw captures and by an
/// independent parser (werkzeug).
@Suite("AFHTTPSessionManager streamed upload task", .serialized)
struct AFStreamedUploadTaskTests {
    /// The transports the checks run over.
    typealias Kind = AFTransportKind

    /// What an upload task's completion handler got.
    struct Completion: @unchecked Sendable {
        var response: URLResponse?
        var object: Any?
        var error: (any Error)?
    }

    /// Makes a task with `make` (given the completion handler), runs `beforeResume` on it,
    /// resumes it unless told not to, and waits for its completion handler.
    static func completion(
        resuming: Bool = true,
        _ make: (@escaping AFHTTPSessionManager.UploadCompletionHandler) -> AFHTTPSessionDataTask,
        beforeResume: (AFHTTPSessionDataTask) -> Void = { _ in }
    ) async -> (task: AFHTTPSessionDataTask, completion: Completion) {
        let box = Locked<AFHTTPSessionDataTask?>(nil)
        let completion: Completion = await withCheckedContinuation { continuation in
            let task = make { response, object, error in
                continuation.resume(returning: Completion(response: response, object: object, error: error))
            }
            box.withLock { $0 = task }
            beforeResume(task)
            if resuming { task.resume() }
        }
        return (box.current!, completion)
    }

    /// Runs `body` with a receiver recording raw captures into a fresh directory.
    static func withRecordingReceiver<T>(_ body: (FormReceiver) async throws -> T) async throws -> T {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiver = try await FormReceiver.start(recordingDirectory: directory.appendingPathComponent("captures"))
        let result: Result<T, any Error>
        do { result = .success(try await body(receiver)) } catch { result = .failure(error) }
        await receiver.stop()
        return try result.get()
    }

    /// Whether two bodies are the same bytes (a plain `Bool`: `#expect(a == b)` on large `Data`
    /// that differs computes a collection difference, for minutes).
    static func same(_ a: Data?, _ b: Data?) -> Bool { a == b }

    /// The raw body the receiver captured of its last request.
    static func capturedBody(_ receiver: FormReceiver) throws -> Data {
        let path = try #require(receiver.lastRequest?.capturePath)
        return try RawHTTPRequest(contentsOf: URL(fileURLWithPath: path)).body
    }

    /// The reference's worked body (§2.10), as AFNetworking wrote it: 231 bytes.
    static let referenceBody = Data(
        ("--Boundary+0123456789ABCDEF\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
            + "--Boundary+0123456789ABCDEF\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nhi\r\n--Boundary+0123456789ABCDEF--\r\n").utf8)

    /// The reference's worked request (§2.10) to `url`.
    static func referenceRequest(_ url: URL) throws -> URLRequest {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.multipartBoundary = TestSupport.boundary
        return try serializer.multipartFormRequest(
            withMethod: "POST", urlString: url.absoluteString, parameters: ["a": "1"],
            constructingBodyWith: { form in
                form.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "f.txt", mimeType: "text/plain")
            })
    }

    @Test(
        "the reference's worked request goes out with AFNetworking's 231 bytes; suspended until resumed; progress ends at the length",
        arguments: Kind.allCases)
    func referenceBytes(kind: Kind) async throws {
        #expect(Self.referenceBody.count == 231)
        try await Self.withRecordingReceiver { receiver in
            let request = try Self.referenceRequest(receiver.url("/upload"))
            let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: kind.transport)
            let progress = Locked<[(completed: Int64, total: Int64)]>([])
            let (task, completion) = await Self.completion(
                { handler in
                    manager.uploadTask(
                        withStreamedRequest: request,
                        progress: { value in progress.withLock { $0.append((value.completedUnitCount, value.totalUnitCount)) } },
                        completionHandler: handler)
                },
                beforeResume: { task in
                    #expect(task.state == .suspended)
                    #expect(receiver.requests.isEmpty)
                })
            #expect(completion.error == nil)
            #expect((completion.response as? HTTPURLResponse)?.statusCode == 200)
            #expect((completion.object as? [String: Any])?["path"] as? String == "/upload")
            #expect(task.state == .completed)
            #expect(task.response?.statusCode == 200)
            let last = try #require(progress.current.last)
            #expect(last.completed == 231 && last.total == 231)
            let received = try #require(receiver.lastRequest)
            #expect(receiver.requests.count == 1)
            #expect(received.method == "POST")
            #expect(received.contentLength == 231)
            #expect(received.header("Transfer-Encoding") == nil)
            #expect(received.header("Content-Type") == "multipart/form-data; boundary=\(TestSupport.boundary)")
            #expect(try Self.capturedBody(receiver) == Self.referenceBody)
        }
    }

    @Test(
        "a form with a file, data and a stream: the bytes the documented route (file, then URLSession) sends; werkzeug sees the parts",
        arguments: Kind.allCases)
    func sameBytesAsTheDocumentedRoute(kind: Kind) async throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let photoURL = try TestSupport.write(photo, named: "photo.jpg", in: directory)
        let note = Data("a note, streamed".utf8)
        try await Self.withRecordingReceiver { receiver in
            let serializer = AFHTTPRequestSerializer.serializer()
            let request = try serializer.multipartFormRequest(
                withMethod: "POST", urlString: receiver.url("/upload").absoluteString,
                parameters: ["album": "2026", "tags": ["sea", "sky"]],
                constructingBodyWith: { form in
                    try form.appendPart(withFileURL: photoURL, name: "photo")
                    form.appendPart(
                        withFileData: Data("{\"w\":640}".utf8), name: "meta", fileName: "meta.json", mimeType: "application/json")
                    form.appendPart(
                        with: InputStream(data: note), name: "note", fileName: "note.txt", length: Int64(note.count), mimeType: "text/plain"
                    )
                })
            let boundary = try #require(request.value(forHTTPHeaderField: "Content-Type")?.components(separatedBy: "boundary=").last)
            let length = try #require(request.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) })

            // The documented route: the stream written to a file, the file uploaded by URLSession.
            let bodyFile = directory.appendingPathComponent("body")
            let written = try await serializer.request(withMultipartForm: request, writingStreamContentsToFile: bodyFile)
            _ = try await URLSession.shared.upload(for: written, fromFile: bodyFile)
            let documented = try Self.capturedBody(receiver)
            #expect(Self.same(documented, try Data(contentsOf: bodyFile)))
            #expect(documented.count == length)

            // The new route: the same request, streamed by the manager.
            let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: kind.transport)
            let (_, completion) = await Self.completion { handler in
                manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: handler)
            }
            #expect(completion.error == nil)
            let received = try #require(receiver.lastRequest)
            #expect(received.contentLength == length)
            #expect(received.header("Transfer-Encoding") == nil)
            let streamed = try Self.capturedBody(receiver)
            #expect(Self.same(streamed, documented))

            let parsed = try await WerkzeugForm.parse(streamed, contentType: "multipart/form-data; boundary=\(boundary)")
            #expect(parsed.form == [["album", "2026"], ["tags[]", "sea"], ["tags[]", "sky"]])
            #expect(parsed.files.count == 3)
            #expect(parsed.files.first?["photo"]?.filename == "photo.jpg")
            #expect(parsed.files.first?["photo"]?.contentType == "image/jpeg")
            #expect(Self.same(parsed.files.first?["photo"].flatMap { Data(base64Encoded: $0.base64) }, photo))
            #expect(parsed.files.dropFirst().first?["meta"].flatMap { Data(base64Encoded: $0.base64) } == Data("{\"w\":640}".utf8))
            #expect(parsed.files.last?["note"].flatMap { Data(base64Encoded: $0.base64) } == note)
        }
    }

    @Test("a request whose body is not the serializer's stream: its bytes, with their length", arguments: Kind.allCases)
    func otherBodies(kind: Kind) async throws {
        try await Self.withRecordingReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: kind.transport)
            let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) })
            var request = URLRequest(url: receiver.url("/raw"))
            request.httpMethod = "PUT"
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            request.httpBodyStream = InputStream(data: bytes)
            let (_, completion) = await Self.completion { handler in
                manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: handler)
            }
            #expect(completion.error == nil)
            let received = try #require(receiver.lastRequest)
            #expect(received.method == "PUT")
            #expect(received.contentLength == bytes.count)
            #expect(received.header("Transfer-Encoding") == nil)
            #expect(Self.same(try Self.capturedBody(receiver), bytes))
        }
    }

    @Test("cancelled before it was resumed: the handler gets NSURLErrorCancelled, nothing is sent")
    func cancelBeforeResume() async throws {
        try await Self.withRecordingReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: FormDataRequest.defaultTransport)
            let request = try Self.referenceRequest(receiver.url("/upload"))
            let (task, completion) = await Self.completion(
                resuming: false, { handler in manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: handler) },
                beforeResume: { $0.cancel() })
            let error = try #require(completion.error) as NSError
            #expect(error.domain == NSURLErrorDomain)
            #expect(error.code == NSURLErrorCancelled)
            #expect(completion.response == nil && completion.object == nil)
            #expect(task.state == .completed)
            task.resume()  // does nothing now
            #expect(receiver.requests.isEmpty)
        }
    }

    @Test("a status the response serializer refuses: the handler gets the response and the error, no object")
    func refusedStatus() async throws {
        try await Self.withRecordingReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: FormDataRequest.defaultTransport)
            let request = try Self.referenceRequest(receiver.url("/status/422"))
            let (_, completion) = await Self.completion { handler in
                manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: handler)
            }
            #expect((completion.response as? HTTPURLResponse)?.statusCode == 422)
            #expect(completion.object == nil)
            #expect(completion.error is AFURLResponseSerializationError)
            #expect(try Self.capturedBody(receiver) == Self.referenceBody)
        }
    }
}
