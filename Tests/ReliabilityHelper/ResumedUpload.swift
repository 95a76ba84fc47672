#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import Foundation

#if AsyncHTTPClient
import FormDataKitAsyncHTTPClient
#endif

/// One upload sent with ``FormDataRequest/shouldResumeInterruptedUploads`` to `url` (the
/// resumable-upload server, through the cutting relay). `format`: `multipart` (a field and a
/// file part of `sizeKiB`), `urlencoded` (one value of `sizeKiB` in memory) or `raw` (the file as
/// the body); `gzip` compresses the body. Reports the status, the server's answer, the sha256 of
/// the bytes the client meant to send (the built, possibly compressed, body), the body length,
/// the resumptions, the progress reported in all, the body bytes the transport sent over every
/// exchange, the peak RSS, the answer's HTTP version. `transport`: `curl` (CurlTransport),
/// `curl-h2c` (CurlTransport, `httpVersion` `.http2PriorKnowledge`) or `asynchttpclient` (with
/// the AsyncHTTPClient trait: the upload is created first, there is no `104`).
func runResumedUpload(format: String, sizeKiB: Int, gzip: Bool, url: URL, limit: Int, transport name: String) -> Never {
    let directory = (try? TemporaryStorage.directory()) ?? NSTemporaryDirectory()
    let path = "\(directory)/resumed-source-\(getpid())"
    defer { unlink(path) }
    writePseudoRandomFile(path, sizeKiB: sizeKiB)
    let request = FormDataRequest(url: url)
    let transport: CountingTransport
    switch name {
    case "curl", "curl-h2c": transport = CountingTransport(base: CurlTransport())
    #if AsyncHTTPClient
    case "asynchttpclient": transport = CountingTransport(base: AsyncHTTPClientTransport.shared)
    #endif
    default: report(["error": "transport \(name) is not in this build"])
    }
    request.transport = transport
    // `curl-h2c`: h2 over cleartext by prior knowledge (the server runs with --h2c).
    if name == "curl-h2c" { request.httpVersion = .http2PriorKnowledge }
    request.shouldResumeInterruptedUploads = true
    request.numberOfTimesToResumeUpload = limit
    request.shouldCompressRequestBody = gzip
    request.timeOutSeconds = 30
    do {
        switch format {
        case "multipart":
            request.addPostValue("resumable", forKey: "field")
            try request.addFile(path, forKey: "file")
        case "urlencoded":
            request.postFormat = .urlEncoded
            let text = String(repeating: "résumé & more=", count: max(1, sizeKiB * 1024 / 15))
            request.addPostValue(text, forKey: "text")
        default:
            request.postBodyFilePath = path
        }
        try request.buildPostBody()
    } catch {
        report(describe(error))
    }
    let expected = sha256OfBuiltBody(request)
    let progress = ProgressLog()
    request.bytesSentBlock = { sent, _ in progress.add(sent) }
    request.startSynchronous()
    var values: [String: Any] = [
        "status": request.responseStatusCode, "answer": request.responseString ?? "", "expectedSHA256": expected,
        "postLength": request.postLength, "resumeCount": request.uploadResumeCount,
        "resumptionURL": request.uploadResumptionURL?.absoluteString ?? "", "progress": progress.total, "clientSent": transport.sent.total,
        "peakRSSKiB": statusKiB("VmHWM"), "httpVersion": request.responseHTTPVersion?.rawValue ?? "",
    ]
    if let error = request.error { values.merge(describe(error)) { a, _ in a } }
    report(values)
}

/// Sums the progress reported (a lock: the block runs on the request's callback queue).
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var sum: UInt64 = 0
    func add(_ sent: UInt64) { lock.withLock { sum += sent } }
    var total: UInt64 { lock.withLock { sum } }
}

/// A file of `sizeKiB` KiB: one MiB of pseudo-random bytes (xorshift), written again and again,
/// each copy starting with its own index (so no two MiB of the file are alike and a byte out of
/// place changes the sha256).
func writePseudoRandomFile(_ path: String, sizeKiB: Int) {
    guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else { return }
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var block = [UInt8](repeating: 0, count: 1 << 20)
    for index in block.indices {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        block[index] = UInt8(truncatingIfNeeded: state)
    }
    var remaining = sizeKiB * 1024
    var number: UInt64 = 0
    while remaining > 0 {
        withUnsafeBytes(of: number.littleEndian) { block.replaceSubrange(0..<8, with: $0) }
        let count = min(remaining, block.count)
        handle.write(Data(block[0..<count]))
        remaining -= count
        number += 1
    }
    handle.closeFile()
}

/// The sha256 of the body as built, by coreutils' `sha256sum` (fast in a debug build): the
/// compressed file for a gzip body, else the encoded parts piped to it as the send reads them
/// (nothing is spooled: the send then streams from the parts). Empty for a compressed body kept
/// in memory (too small for these tests).
func sha256OfBuiltBody(_ request: FormDataRequest) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    let input = Pipe()
    let output = Pipe()
    process.standardOutput = output
    if request.shouldCompressRequestBody {
        guard let path = request.compressedPostBodyFilePath else { return "" }
        process.arguments = [path]
    } else {
        process.standardInput = input
    }
    do { try process.run() } catch { return "sha256sum failed: \(error)" }
    if !request.shouldCompressRequestBody, let source = request.bodySource {
        try? source.forEachChunk(size: 1 << 20) { input.fileHandleForWriting.write(Data($0)) }
    }
    try? input.fileHandleForWriting.close()
    // The whole output is there once sha256sum closes it (as it exits). No waitUntilExit():
    // corelibs Foundation's spins the current run loop (here off the main thread, on an event
    // loop's thread in the server) — one suspect of an unexplained stall, removed.
    let data = output.fileHandleForReading.readDataToEndOfFile()
    return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
}

/// A transport, counting the body bytes it hands to the network over every exchange (the
/// first attempt, each append): what the client sent in all.
final class CountingTransport: FormDataTransport {
    let base: any FormDataTransport
    let sent = ProgressLog()

    init(base: any FormDataTransport) { self.base = base }

    var acceptedBodyForms: TransportBodyForms { base.acceptedBodyForms }
    var inMemoryBodyLimit: UInt64 { base.inMemoryBodyLimit }
    var capabilities: TransportCapabilities { base.capabilities }
    var redirectPolicy: RedirectPolicy? { base.redirectPolicy }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        base.start(request, observer: Counting(inner: observer, sent: sent))
    }

    private struct Counting: TransportObserver {
        let inner: any TransportObserver
        let sent: ProgressLog

        func transportDidSendBodyData(bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64) {
            sent.add(UInt64(max(0, bytesSent)))
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
