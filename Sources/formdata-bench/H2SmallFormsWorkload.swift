import FormDataKit
#if AsyncHTTPClient
import FormDataKitAsyncHTTPClient
#endif
import Foundation

/// W9 small forms over TLS to one origin: W7's form, `count` times with 64 in flight, to Go
/// `net/http`'s TLS receiver (Benchmarks/peers/go-w9, a fresh self-signed certificate each run)
/// speaking h2, then one speaking HTTP/1.1 only, to show what h2 buys. Senders, each a process of
/// its own: FormDataKit (`startAsynchronous()` and blocks, `httpVersion` `.http2` or `.http1_1`,
/// one `CurlTransport` trusting the certificate), Go's client (`ForceAttemptHTTP2`, or h2 off)
/// and `curl --http2|--http1.1 --parallel --parallel-max 64`; with the AsyncHTTPClient trait, also
/// FormDataKit over `AsyncHTTPClientTransport` (h2 when the receiver offers it, `.automatic`).
/// A row's note has the connections the receiver accepted. Skipped without `go` (the receiver is
/// Go's).
enum H2SmallFormsWorkload {
    static let name = "W9 small forms over TLS"
    static let ours = "FormDataKit curl, blocks"

    static func run(count: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        guard let go = goPeer("go-w9", in: directory) else {
            report.checks.append("\(name): skipped (install Debian's golang-go: the receiver is Go's)")
            return
        }
        let file = try directory.generate("w9-2kib.bin", size: SmallFormsWorkload.fileBytes, seed: 77, text: false)
        let inFlight = SmallFormsWorkload.inFlight
        for version in ["h2", "h1"] {
            let receiver = try TLSReceiver(go: go, mode: version, directory: "\(directory.path)/w9-\(version)")
            defer { receiver.stop() }
            let url = "https://127.0.0.1:\(receiver.port)/upload"
            let workload = "\(name), \(version == "h2" ? "HTTP/2" : "HTTP/1.1"), \(count) with \(inFlight) in flight"
            let bytes = count * (SmallFormsWorkload.fileBytes + 400)
            func row(_ tool: String, _ note: String) -> ResultRow {
                ResultRow(workload: workload, tool: tool, bytes: bytes, seconds: [], peakRSSKiB: 0, note: note, reference: "Go net/http")
            }
            let config = try SmallFormsWorkload.curlConfig(
                count: count, url: url, file: file, in: directory, name: "w9-\(version).curlrc",
                extra: "cacert = \"\(receiver.certificate)\"\n\(version == "h2" ? "http2" : "http1.1")\n")
            var cases = [
                MeasuredCase(
                    row: row(ours, "httpVersion \(version == "h2" ? ".http2" : ".http1_1"); build + send, a new request each"),
                    timing: .wallClock,
                    command: [selfPath, "--child", "w9", version, String(count), String(inFlight), url, file, receiver.certificate],
                    requests: count),
                MeasuredCase(
                    row: row("Go net/http", "ref; mime/multipart + http.Client\(version == "h2" ? " (h2)" : ", h2 off")"),
                    timing: .wallClock, command: [go, "send", version, String(count), String(inFlight), url, file, receiver.certificate],
                    requests: count),
            ]
            #if AsyncHTTPClient
            cases.append(
                MeasuredCase(
                    row: row(
                        "FormDataKit AsyncHTTPClient, blocks", "httpVersion .automatic (h2 when offered); build + send, a new request each"),
                    timing: .wallClock,
                    command: [selfPath, "--child", "w9", version, String(count), String(inFlight), url, file, receiver.certificate]
                        + ["asynchttpclient"],
                    requests: count))
            #endif
            if toolExists("curl") {
                cases.append(
                    MeasuredCase(
                        row: row("curl", "\(version == "h2" ? "--http2" : "--http1.1") --parallel --parallel-max \(inFlight)"),
                        timing: .wallClock,
                        command: ["curl", "-sS", "--fail", "--parallel", "--parallel-max", String(inFlight), "-K", config],
                        requests: count))
            }
            var connections = Array(repeating: [Int](), count: cases.count)
            for _ in 0..<runs {
                for index in cases.indices where !cases[index].failed {
                    cases[index].measure(
                        receiver: receiver, bodyBytesAbove: SmallFormsWorkload.fileBytes, stdoutPath: "\(directory.path)/w9-stdout",
                        failures: &report.failures)
                    connections[index].append(receiver.connections)
                    let overH2 = version == "h2" ? count : 0
                    if !cases[index].failed && receiver.h2Requests != overH2 {
                        cases[index].failed = true
                        report.failures.append(
                            "\(workload) · \(cases[index].row.tool): \(receiver.h2Requests) of \(count) requests over h2 (want \(overH2))")
                    }
                }
            }
            report.rows += cases.indices.map { index in
                var row = cases[index].finishedRow
                if row.medianSeconds > 0 { row.note += String(format: "; %.0f requests/s", Double(count) / row.medianSeconds) }
                row.note += "; connections \(connections[index].map(String.init).joined(separator: "/"))"
                return row
            }
        }
        report.checks += checks(report.rows.filter { $0.workload.hasPrefix(name) })
    }

    /// The W9 targets (issue 57): over h2, FormDataKit's requests per second ≥ 1.0× Go's and
    /// curl's; over HTTP/1.1 the same ratios, for the record.
    static func checks(_ rows: [ResultRow]) -> [String] {
        var lines: [String] = []
        for workload in Set(rows.map(\.workload)).sorted() {
            guard let mine = rows.first(where: { $0.workload == workload && $0.tool == ours }), mine.medianSeconds > 0 else { continue }
            for peer in ["Go net/http", "curl"] {
                guard let other = rows.first(where: { $0.workload == workload && $0.tool == peer }), other.medianSeconds > 0 else {
                    lines.append("Target (\(workload)): \(ours) ≥ 1.0× \(peer): \(peer) not measured")
                    continue
                }
                let ratio = other.medianSeconds / mine.medianSeconds
                lines.append(
                    String(
                        format: "Target (%@): %@ ≥ 1.0× %@ in requests/s: %.2f× — %@", workload, ours, peer, ratio,
                        ratio >= 1 ? "met" : "NOT met") + roundRatios(other, mine) { $0 >= 1 })
            }
        }
        return lines
    }

    /// The child: `w9 h2|h1 COUNT IN_FLIGHT URL FILE CERT` — W7's form COUNT times, IN_FLIGHT at
    /// once, with `startAsynchronous()` and blocks over one `CurlTransport` trusting CERT, with
    /// `httpVersion` `.http2` or `.http1_1`; fails unless every answer is 200 (the receiver counts
    /// the requests that came over h2). With a seventh argument `asynchttpclient` (AsyncHTTPClient
    /// trait), over one `AsyncHTTPClientTransport` trusting CERT, `httpVersion` `.automatic`.
    static func child(_ arguments: [String]) throws {
        let usage = "w9 h2|h1 COUNT IN_FLIGHT URL FILE CERT [asynchttpclient]"
        guard arguments.count == 6 || arguments.count == 7, ["h2", "h1"].contains(arguments[0]), let count = Int(arguments[1]),
            let inFlight = Int(arguments[2]), let url = URL(string: arguments[3])
        else { throw BenchError.usage(usage) }
        let certificate = try Data(contentsOf: URL(fileURLWithPath: arguments[5]))
        let pinning = TrustAnchorPinning(certificates: [certificate])
        var transport: any FormDataTransport = CurlTransport(configuration: .init(trust: pinning))
        var version: HTTPVersion = arguments[0] == "h2" ? .http2 : .http1_1
        if arguments.count == 7 {
            #if AsyncHTTPClient
            guard arguments[6] == "asynchttpclient" else { throw BenchError.usage(usage) }
            transport = AsyncHTTPClientTransport(configuration: try .init(pinning: pinning))
            version = .automatic
            #else
            throw BenchError.usage("w9: built without the AsyncHTTPClient trait")
            #endif
        }
        let (chosenTransport, chosenVersion) = (transport, version)
        try SmallFormsEntryPoint.sendWithBlocks(count: count, inFlight: inFlight, url: url, file: arguments[4]) { request in
            request.transport = chosenTransport
            request.httpVersion = chosenVersion
        }
    }
}

/// W9's receiver: `go-w9 serve`, which counts what it reads and the connections it accepts,
/// answering `reset` and `stats` on its standard input.
final class TLSReceiver: CountingReceiver {
    private let process: AnnouncedProcess
    let port: Int
    /// The receiver's self-signed certificate (PEM), to trust.
    let certificate: String
    /// The connections it accepted since the last reset, as of the last ``stats``.
    private(set) var connections = 0
    /// The requests that came over h2 since the last reset, as of the last ``stats``.
    private(set) var h2Requests = 0

    init(go: String, mode: String, directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        switch try AnnouncedProcess.start([go, "serve", mode, directory], stderrPath: "\(directory)/stderr") {
        case .running(let process):
            self.process = process
            port = process.port
        case .exited(let status, let stderr):
            throw BenchError.childFailed("go-w9 serve exited \(status): \(stderr)")
        }
        certificate = "\(directory)/cert.pem"
    }

    func reset() { _ = process.ask("reset") }

    var stats: DiscardReceiver.Stats {
        let fields = (process.ask("stats") ?? "").split(separator: " ").compactMap { Int($0) }
        guard fields.count == 5 else { return DiscardReceiver.Stats() }
        (connections, h2Requests) = (fields[3], fields[4])
        return DiscardReceiver.Stats(requests: fields[0], lastBodyBytes: 0, minimumBodyBytes: fields[1], totalBodyBytes: fields[2])
    }

    func stop() { process.stop() }
}
