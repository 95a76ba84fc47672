import FormDataKit
import Foundation

/// `formdata-bench --child fault-resume URL FILE LIMIT TIMEOUT`: the resumable scenario's client,
/// run inside the lab's client namespace. One form (a field and FILE) sent by FormDataKit over a
/// `CurlTransport` with `shouldResumeInterruptedUploads`, `numberOfTimesToResumeUpload = LIMIT`,
/// `timeOutSeconds = TIMEOUT`, its transport wrapped to count the body bytes handed to the
/// network over every exchange (the first, each append). Prints ``ResumeWorkload/resultPrefix``
/// and a JSON object: seconds, status, answer (the server's), postLength, resumeCount, sent (the
/// body bytes in all), sha256 (of the body as built, hashed after the clock stopped), error.
enum FaultResumeClient {
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 4, let url = URL(string: arguments[0]), let limit = Int(arguments[2]), let timeout = Double(arguments[3])
        else { throw BenchError.usage("fault-resume URL FILE LIMIT TIMEOUT") }
        let transport = SentBodyCounter(base: CurlTransport.shared)
        let (request, body, elapsed) = try ResumeWorkload.sendResumable(
            url: url, file: arguments[1], limit: limit, timeout: timeout, transport: transport, field: "formdata-bench faults resume")
        let values: [String: Any] = [
            "seconds": elapsed, "status": request.responseStatusCode, "answer": request.responseString ?? "",
            "postLength": Int(request.postLength), "resumeCount": request.uploadResumeCount, "sent": transport.sent,
            "sha256": request.error == nil ? try body.map(ResumeWorkload.sha256) ?? "" : "",
            "error": request.error.map { "\($0)" } ?? "",
        ]
        let json = try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])
        print(ResumeWorkload.resultPrefix + String(decoding: json, as: UTF8.self))
    }
}

/// A transport that counts the body bytes its base hands to the network, over every exchange.
final class SentBodyCounter: FormDataTransport {
    let base: any FormDataTransport
    private let total = Locked(0)

    init(base: any FormDataTransport) { self.base = base }

    /// The body bytes sent so far, over every exchange.
    var sent: Int { total.current }

    var acceptedBodyForms: TransportBodyForms { base.acceptedBodyForms }
    var inMemoryBodyLimit: UInt64 { base.inMemoryBodyLimit }
    var capabilities: TransportCapabilities { base.capabilities }
    var redirectPolicy: RedirectPolicy? { base.redirectPolicy }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        base.start(request, observer: Counting(inner: observer, total: total))
    }

    private struct Counting: TransportObserver {
        let inner: any TransportObserver
        let total: Locked<Int>

        func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64) {
            total.withLock { $0 += Int(max(0, bytesSent)) }
            inner.transportDidSendBodyData(bytesSent: bytesSent, totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected)
        }
        func transportDidReceiveInformationalResponse(_ head: TransportResponseHead) {
            inner.transportDidReceiveInformationalResponse(head)
        }
        func transportDidReceiveResponse(_ head: TransportResponseHead) { inner.transportDidReceiveResponse(head) }
        func transportDidReceiveBodyData(_ data: Data) { inner.transportDidReceiveBodyData(data) }
        func transportDidFinish(_ error: FormDataError?) { inner.transportDidFinish(error) }
    }
}
