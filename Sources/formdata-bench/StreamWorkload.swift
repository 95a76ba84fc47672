import FormDataKit
import Foundation

/// W10 streamed part: a multipart form with a field and one part of unknown length — BYTES
/// generated in 64 KiB pieces by an `AsyncStream` (`addStream`, no length: sent chunked,
/// read through the one body reader) — sent once to the loopback ``DiscardReceiver`` by
/// FormDataKit over `CurlTransport.shared`, against Go's `io.Pipe` + `mime/multipart` client
/// (Benchmarks/peers/go-stream, the reference) in the same run. Each sender is a child process:
/// the row's time is its wall time, its peak RSS its own. The targets: ≥ 0.9× Go's speed and
/// ≤ 48 MiB peak RSS at 1 GiB.
enum StreamWorkload {
    static let name = "W10 streamed part of unknown length"
    static let ours = "FormDataKit curl, addStream(AsyncStream)"
    static let reference = "Go net/http io.Pipe"
    static let pieceBytes = 64 << 10

    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        let receiver = try DiscardReceiver()
        defer { receiver.stop() }
        let url = "http://127.0.0.1:\(receiver.port)/upload"
        let bytes = totalMiB << 20
        let workload = "\(name), \(totalMiB) MiB"
        var cases = [
            MeasuredCase(
                row: ResultRow(
                    workload: workload, tool: ours, bytes: bytes, seconds: [], peakRSSKiB: 0, note: "chunked; wall time of the process",
                    reference: goPeer("go-stream", in: directory) == nil ? nil : reference),
                timing: .wallClock, command: [selfPath, "--child", "stream", String(bytes), url])
        ]
        if let go = goPeer("go-stream", in: directory) {
            cases.append(
                MeasuredCase(
                    row: ResultRow(
                        workload: workload, tool: reference, bytes: bytes, seconds: [], peakRSSKiB: 0,
                        note: "ref; mime/multipart through io.Pipe, chunked"),
                    timing: .wallClock, command: [go, String(bytes), url]))
        } else {
            report.checks.append("\(workload) · \(reference): skipped (install Debian's golang-go for this row)")
        }
        for _ in 0..<runs {
            for index in cases.indices where !cases[index].failed {
                cases[index].measure(
                    receiver: receiver, bodyBytesAbove: bytes - 1, stdoutPath: "\(directory.path)/stream-stdout", failures: &report.failures
                )
            }
        }
        let rows = cases.map(\.finishedRow)
        report.rows += rows
        guard let ours = rows.first, ours.medianSeconds > 0, totalMiB >= 1024 else { return }
        if let go = rows.first(where: { $0.tool == reference }), go.medianSeconds > 0 {
            let ratio = go.medianSeconds / ours.medianSeconds
            report.checks.append(
                String(format: "Target (%@): ≥ 0.9× %@'s speed: %.2f× — %@", workload, reference, ratio, ratio >= 0.9 ? "met" : "NOT met"))
        }
        let peak = Double(ours.peakRSSKiB ?? 0) / 1024
        report.checks.append(
            String(format: "Target (%@): peak RSS ≤ 48 MiB: %.1f MiB — %@", workload, peak, peak <= 48 ? "met" : "NOT met"))
    }

    /// The child: `stream BYTES URL` — the form with a BYTES part of unknown length, sent once.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2, let bytes = Int(arguments[0]), let url = URL(string: arguments[1]) else {
            throw BenchError.usage("stream BYTES URL")
        }
        let piece = Data(repeating: UInt8(ascii: "s"), count: pieceBytes)
        // Generated as it is read: the next piece only when the reader asks for it.
        let left = Locked(bytes)
        let pieces = AsyncStream<Data> {
            left.withLock { left -> Data? in
                guard left > 0 else { return nil }
                let count = min(left, pieceBytes)
                left -= count
                return count == pieceBytes ? piece : piece.prefix(count)
            }
        }
        let request = FormDataRequest(url: url)
        request.transport = CurlTransport.shared
        request.timeOutSeconds = 60
        request.addPostValue("a streamed part", forKey: "name")
        request.addStream(pieces, withFileName: "stream.bin", andContentType: "application/octet-stream", forKey: "file")
        if let error = request.startSynchronous() { throw BenchError.childFailed("stream: \(error)") }
        guard request.responseStatusCode == 200 else { throw BenchError.childFailed("stream: status \(request.responseStatusCode)") }
    }
}
