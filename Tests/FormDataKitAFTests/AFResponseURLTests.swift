import FormDataKit
import FormDataKitAF
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `HTTPURLResponse` both AF façades hand out is the answer's, as URLSession's is: its URL is
/// the final one, after the redirects the send followed.
@Suite("AF responses: the final URL, after a redirect")
struct AFResponseURLTests {
    /// Answers `/start` with a 302 to `/final`, and `/final` with a 200.
    struct RedirectingTransport: FormDataTransport {
        struct NoTask: TransportTask { func cancel() {} }

        func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
            let length = Int64(request.body.length)
            DispatchQueue.global().async {
                observer.transportDidSendBodyData(bytesSent: length, totalBytesSent: length, totalBytesExpected: length)
                if request.url.path == "/start" {
                    observer.transportDidReceive(FormDataResponse(statusCode: 302, headers: ["Location": "/final"], body: Data()))
                } else {
                    observer.transportDidReceive(
                        FormDataResponse(
                            statusCode: 200, headers: ["Content-Type": "text/plain", "X-Path": request.url.path], body: Data("ok".utf8)))
                }
            }
            return NoTask()
        }
    }

    static let start = URL(string: "http://example.invalid/start")!
    static let final = URL(string: "http://example.invalid/final")!

    @Test("AFHTTPSessionManager: the task's response is the final answer, with the final URL")
    func sessionTask() async throws {
        let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: RedirectingTransport())
        let task = await withCheckedContinuation { (continuation: CheckedContinuation<AFHTTPSessionDataTask?, Never>) in
            manager.post(
                Self.start.absoluteString, parameters: ["k": "v"], headers: nil, progress: nil,
                success: { task, _ in continuation.resume(returning: task) }, failure: { task, _ in continuation.resume(returning: task) })
        }
        let response = try #require(task?.response)
        #expect(response.statusCode == 200)
        #expect(response.url == Self.final)
        #expect(response.value(forHTTPHeaderField: "X-Path") == "/final")
    }

    @Test("AFHTTPRequestOperation: the response is the final answer, with the final URL")
    func operation() throws {
        var request = URLRequest(url: Self.start)
        request.httpMethod = "POST"
        request.httpBody = Data("k=v".utf8)
        let operation = AFHTTPRequestOperation(request: request, transport: RedirectingTransport())
        let queue = OperationQueue()
        queue.addOperation(operation)
        queue.waitUntilAllOperationsAreFinished()
        #expect(operation.error == nil)
        let response = try #require(operation.response)
        #expect(response.statusCode == 200)
        #expect(response.url == Self.final)
    }
}
