@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The façade adapter's promises, over a scripted transport: cumulative progress ending at the
/// body's length, one `HTTPURLResponse`, the body file's life, the cancel before the start, and
/// callbacks in the order they were delivered.
@Suite("FacadeSend: what both façades get from a send")
struct FacadeSendTests {
    static let url = URL(string: "http://example.invalid/upload")!
    static let timeout = FormDataError.timedOut(underlying: UnderlyingError(domain: NSURLErrorDomain, code: -1001, message: "timed out"))
    static let ok = FormDataResponse(statusCode: 201, headers: ["Content-Type": "text/plain"], body: Data("done".utf8))

    static func request(bodyLength: Int) -> TransportRequest {
        TransportRequest(url: url, method: "POST", headers: [], body: .data(Data(repeating: 7, count: bodyLength)), timeoutInterval: 30)
    }

    /// The events of one send, once it has ended.
    final class Events: @unchecked Sendable {
        // `@unchecked`: `events` is touched only under `lock`.
        private let lock = NSLock()
        private var events: [FacadeSend.Event] = []
        let ended = DispatchSemaphore(value: 0)

        func record(_ event: FacadeSend.Event) {
            lock.withLock { events.append(event) }
            if case .finished = event { ended.signal() }
        }

        var all: [FacadeSend.Event] { lock.withLock { events } }
        var progress: [FacadeSend.UploadProgress] {
            all.compactMap { if case .uploadProgress(let progress) = $0 { progress } else { nil } }
        }
        var result: Result<FormDataResponse, FormDataError>? {
            all.lazy.compactMap { if case .finished(let result) = $0 { result } else { nil } }.first
        }

        func waitForEnd() -> Bool { ended.wait(timeout: .now() + 10) == .success }
    }

    @Test("upload progress is cumulative and monotonic, ends at exactly the body's length; 0 again when a timed-out attempt is taken back")
    func cumulativeProgress() throws {
        let transport = ScriptedTransport([.failure(Self.timeout), .success(Self.ok)])
        let events = Events()
        let send = FacadeSend(transport: transport) { events.record($0) }
        var options = FacadeSend.Options()
        options.retriesOnTimeout = 1
        send.start(Self.request(bodyLength: 1001), bodyFile: nil, options: options)
        #expect(events.waitForEnd())
        let progress = events.progress
        #expect(progress.allSatisfy { $0.total == 1001 })
        // Each report's count is the one before plus its delta; the timed-out attempt's 500
        // bytes are taken back (count 0), and the last report is the whole body.
        var sent: Int64 = 0
        for report in progress {
            sent = report.delta < 0 ? 0 : sent + report.delta
            #expect(UInt64(sent) == report.sent)
        }
        #expect(progress.first?.sent == 500)
        #expect(progress.contains { $0.delta == -500 && $0.sent == 0 })
        #expect(progress.last?.sent == 1001)
        #expect(try events.result?.get().statusCode == 201)
    }

    @Test("the HTTPURLResponse is made once per answer, with the answer's URL, status and headers")
    func httpResponseOnce() throws {
        let transport = ScriptedTransport([.success(Self.ok)])
        let events = Events()
        let send = FacadeSend(transport: transport) { events.record($0) }
        #expect(send.httpResponse == nil)
        send.start(Self.request(bodyLength: 10), bodyFile: nil)
        #expect(events.waitForEnd())
        let response = try #require(send.httpResponse)
        #expect(response === send.httpResponse)
        #expect(response.url == Self.url)
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "content-type") == "text/plain")
    }

    @Test("a cancel before the start: the send ends cancelled when it would start, unsent, and its body file is removed")
    func cancelBeforeStart() throws {
        let transport = ScriptedTransport([.success(Self.ok)])
        let events = Events()
        let send = FacadeSend(transport: transport) { events.record($0) }
        let (file, descriptor) = try TemporaryStorage.makeFile(purpose: "facade-cancel")
        close(descriptor)
        send.cancel()
        #expect(send.isCancelledBeforeStart)
        send.start(Self.request(bodyLength: 10), bodyFile: file)
        #expect(events.waitForEnd())
        #expect(transport.requests.isEmpty)
        #expect(events.result == .failure(.cancelled))
        #expect(events.all.count == 1)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("end: the send ends unsent with the error, once; a later start sends nothing and removes its body file")
    func endUnsent() throws {
        let transport = ScriptedTransport([.success(Self.ok)])
        let events = Events()
        let send = FacadeSend(transport: transport) { events.record($0) }
        send.end(.requestInProgress)
        send.end(.cancelled)
        let (file, descriptor) = try TemporaryStorage.makeFile(purpose: "facade-end")
        close(descriptor)
        send.start(Self.request(bodyLength: 10), bodyFile: file)
        #expect(events.all.count == 1)
        #expect(events.result == .failure(.requestInProgress))
        #expect(transport.requests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(!send.abandon())
    }

    @Test("the body file is removed when a sent request ends")
    func bodyFileRemovedAtEnd() throws {
        let transport = ScriptedTransport([.success(Self.ok)])
        let events = Events()
        let send = FacadeSend(transport: transport) { events.record($0) }
        let (file, descriptor) = try TemporaryStorage.makeFile(purpose: "facade-sent")
        close(descriptor)
        send.start(Self.request(bodyLength: 10), bodyFile: file)
        #expect(events.waitForEnd())
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("the response body is counted per response, with its Content-Length")
    func responseBodyCounted() throws {
        let body = Data(repeating: 1, count: 300)
        let transport = ScriptedTransport([.success(FormDataResponse(statusCode: 200, headers: ["Content-Length": "300"], body: body))])
        let events = Events()
        let send = FacadeSend(transport: transport) { events.record($0) }
        var options = FacadeSend.Options()
        options.streamsResponseBody = true
        options.keepsResponseBody = false
        send.start(Self.request(bodyLength: 10), bodyFile: nil, options: options)
        #expect(events.waitForEnd())
        let chunks = events.all.compactMap {
            if case .responseBody(let data, let received, let expected) = $0 { (data, received, expected) } else { nil }
        }
        #expect(chunks.map(\.1) == [300])
        #expect(chunks.allSatisfy { $0.2 == 300 })
        #expect(try events.result?.get().body.isEmpty == true)
    }

    @Test("callbacks run in the order they were delivered, one at a time, internal work included")
    func orderedCallbacks() {
        let callbacks = OrderedCallbacks()
        let seen = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<2000 {
            callbacks.deliver(internalOnly: index % 3 == 0) {
                seen.withLock { $0.append(index) }
                if index == 1999 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen.current == Array(0..<2000))
    }
}
