import FormDataKit
import Foundation
import Testing

/// The Sending article's transport of one's own, as written there.
struct CannedTransport: FormDataTransport {
    struct NoTask: TransportTask { func cancel() {} }
    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        // Send request.method, request.url, request.headers and request.body (.data / .file)…
        observer.transportDidSendBodyData(
            bytesSent: Int64(request.body.length), totalBytesSent: Int64(request.body.length),
            totalBytesExpected: Int64(request.body.length))
        // …then report what came back: the head, the body bytes, the end (or transportDidFinish(error)).
        observer.transportDidReceive(FormDataResponse(statusCode: 200, headers: ["Content-Type": "text/plain"], body: Data("ok".utf8)))
        return NoTask()
    }
    var redirectPolicy: RedirectPolicy? { RedirectPolicy(maximumRedirects: 2) }
}

/// A transport that answers every exchange with a redirect to the next path, `hops` times.
final class RedirectingTransport: FormDataTransport, @unchecked Sendable {
    // `@unchecked`: `seen` is touched only under `lock`.
    private let lock = NSLock()
    private var seen: [TransportRequest] = []
    let hops: Int
    init(hops: Int) { self.hops = hops }
    var requests: [TransportRequest] { lock.withLock { seen } }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        let count = lock.withLock { () -> Int in
            seen.append(request)
            return seen.count
        }
        if count <= hops {
            observer.transportDidReceive(FormDataResponse(statusCode: 307, headers: ["Location": "/hop\(count)"], body: Data("moved".utf8)))
        } else {
            observer.transportDidReceive(FormDataResponse(statusCode: 200, headers: [:], body: Data("there".utf8)))
        }
        return CannedTransport.NoTask()
    }
    var redirectPolicy: RedirectPolicy? { RedirectPolicy(maximumRedirects: 2) }
}

@Suite("A transport of one's own: one exchange, the rest is the send driver's")
struct OwnTransportTests {
    @Test("the Sending article's CannedTransport: the response, progress at exactly 1.0")
    func readmeTransport() async throws {
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = CannedTransport()
        request.setPostValue("value", forKey: "key")
        let response = try await request.start()
        #expect(response.statusCode == 200)
        #expect(request.responseString == "ok")
        #expect(request.uploadProgress.fractionCompleted == 1.0)
        #expect(request.totalBytesSent == request.postLength)
    }

    @Test("redirects are followed by the driver under the transport's policy: 307 re-sends the body; one too many fails")
    func redirectsFollowedByTheDriver() async throws {
        let transport = RedirectingTransport(hops: 2)
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = transport
        request.setPostValue("value", forKey: "key")
        let response = try await request.start()
        #expect(response.statusCode == 200)
        #expect(request.responseString == "there")
        #expect(transport.requests.map(\.url.path) == ["/upload", "/hop1", "/hop2"])
        #expect(transport.requests.allSatisfy { $0.method == "POST" && $0.body == transport.requests[0].body })
        #expect(request.url.path == "/hop2")

        let tooMany = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        tooMany.transport = RedirectingTransport(hops: 3)
        await #expect(throws: FormDataError.self) { try await tooMany.start() }
        #expect(tooMany.error?.asiErrorCode == 9)
    }

    @Test("an option the transport cannot apply fails before anything is sent, naming it")
    func missingCapability() async throws {
        let transport = RedirectingTransport(hops: 0)
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = transport
        request.proxyHost = "proxy.invalid"
        request.proxyPort = 3128
        await #expect(throws: FormDataError.self) { try await request.start() }
        guard case .unableToCreateRequest(let underlying)? = request.error else {
            Issue.record("not unableToCreateRequest: \(String(describing: request.error))")
            return
        }
        #expect(underlying.message.hasPrefix("proxyHost is set but RedirectingTransport cannot apply it"))
        #expect(transport.requests.isEmpty)
    }
}
