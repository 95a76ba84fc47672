import FormDataKit
import Foundation

/// The delay scenario of `formdata-bench faults`: latency with jitter and loss, FormDataKit
/// against `curl` on the same link in the same run. In a fresh ``FaultLab``: the benchmark's
/// receiver (``DiscardReceiver``, `--child receiver`) on the server namespace's loopback, behind
/// a ``DelayRelay`` on the server's veth address that holds every chunk 200 ms ± 50 ms each way
/// (4 MiB held at most per connection and direction), and 2 % of the packets crossing the veth
/// dropped at random both ways (nft). Over it, from the client namespace: W7's small forms (three
/// fields and a 2 KiB file) `smallForms` times with 64 in flight — FormDataKit's `--child w7
/// parallel` (`startAsynchronous()` + blocks over `CurlTransport.shared`) against `curl
/// --parallel --parallel-max 64` — and one form of a field and a `formMiB` MiB file —
/// FormDataKit's `--child fault-form` against `curl -F` (`Expect:` off, as FormDataKit sends it).
/// The two alternate, the order flipping each run. The receiver counts what arrived for each
/// send; a send that failed, or a count other than the forms sent, fails the command.
enum FaultDelayWorkload {
    static let name = "Faults: 200 ms ± 50 ms delay each way, 2 % loss"
    static let delayMilliseconds = 200
    static let jitterMilliseconds = 50
    static let lossPercent = 2
    static let holdBytes = 4 << 20
    static let inFlight = 64
    static let fieldValue = "formdata-bench faults"

    /// One side of a comparison: its row, its command, the forms and body bytes it sends.
    private struct Side {
        var row: ResultRow
        var command: [String]
        var forms: Int
        var minimumBytes: Int
        var arrived = 0
        var duplicates = 0
        var failed = false
    }

    static func run(smallForms: Int, formMiB: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        if let reason = FaultLab.unavailableReason {
            report.checks.append("\(name): skipped — \(reason)")
            return
        }
        guard toolExists("curl") else {
            report.checks.append("\(name): skipped — needs curl (the peer on the same link)")
            return
        }
        let small = try directory.generate("w7-2kib.bin", size: SmallFormsWorkload.fileBytes, seed: 77, text: false)
        let big = try directory.generate("faults-delay-\(formMiB)mib.bin", size: formMiB << 20, seed: 60, text: false)
        defer { try? FileManager.default.removeItem(atPath: big) }
        let lab = try FaultLab()
        defer { lab.tearDown() }
        let receiver = try started(
            lab.command(in: lab.server, [selfPath, "--child", "receiver"]), "\(directory.path)/faults-delay-receiver")
        defer { receiver.stop() }
        let relay = try started(
            lab.command(
                in: lab.server,
                [
                    selfPath, "--child", "delay-relay", FaultLab.serverAddress, "127.0.0.1", String(receiver.port),
                    String(delayMilliseconds),
                    String(jitterMilliseconds), String(holdBytes),
                ]), "\(directory.path)/faults-delay-relay")
        defer { relay.stop() }
        try lab.setLoss(percent: lossPercent)
        let url = "http://\(FaultLab.serverAddress):\(relay.port)/upload"
        let smallWorkload = "\(name): W7 small forms, \(smallForms) with \(inFlight) in flight"
        let bigWorkload = "\(name): one form of a field and a \(formMiB) MiB file"
        let smallBytes = smallForms * (SmallFormsWorkload.fileBytes + 400)
        let config = try SmallFormsWorkload.curlConfig(count: smallForms, url: url, file: small, in: directory, name: "faults-delay.curlrc")
        let client = { (arguments: [String]) in lab.command(in: lab.client, arguments) }
        var pairs: [[Side]] = [
            [
                Side(
                    row: ResultRow(
                        workload: smallWorkload, tool: SmallFormsWorkload.ours, bytes: smallBytes, seconds: [], peakRSSKiB: 0,
                        reference: "curl"),
                    command: client([selfPath, "--child", "w7", "parallel", String(smallForms), String(inFlight), url, small]),
                    forms: smallForms, minimumBytes: smallForms * SmallFormsWorkload.fileBytes),
                Side(
                    row: ResultRow(workload: smallWorkload, tool: "curl", bytes: smallBytes, seconds: [], peakRSSKiB: 0),
                    command: client([
                        "curl", "-sS", "--no-progress-meter", "--fail", "--parallel", "--parallel-max", String(inFlight), "-K", config,
                    ]),
                    forms: smallForms, minimumBytes: smallForms * SmallFormsWorkload.fileBytes),
            ],
            [
                Side(
                    row: ResultRow(
                        workload: bigWorkload, tool: "FormDataKit curl (CurlTransport.shared)", bytes: formMiB << 20, seconds: [],
                        peakRSSKiB: 0, reference: "curl -F"),
                    command: client([selfPath, "--child", "fault-form", url, big]), forms: 1, minimumBytes: formMiB << 20),
                Side(
                    row: ResultRow(workload: bigWorkload, tool: "curl -F", bytes: formMiB << 20, seconds: [], peakRSSKiB: 0),
                    command: client([
                        "curl", "-sS", "--fail", "-o", "/dev/null", "-H", "Expect:", "-F", "field=\(fieldValue)", "-F", "file=@\(big)", url,
                    ]), forms: 1, minimumBytes: formMiB << 20),
            ],
        ]
        for run in 0..<runs {
            for pair in pairs.indices {
                for side in run % 2 == 0 ? [0, 1] : [1, 0] where !pairs[pair][side].failed {
                    measure(&pairs[pair][side], receiver: receiver, stdoutPath: "\(directory.path)/faults-delay-stdout", report: &report)
                }
            }
        }
        for pair in pairs {
            for side in pair {
                var row = side.row
                let sends = side.row.seconds.count
                row.note =
                    "runs \(sends): arrived \(side.arrived)/\(side.forms * sends), duplicates \(side.duplicates); "
                    + (side.forms > 1 ? String(format: "%.0f forms/s; ", Double(side.forms) / max(row.medianSeconds, 1e-9)) : "")
                    + "wall time of the process in the client namespace, runs "
                    + row.seconds.map { String(format: "%.2f", $0) }.joined(separator: " / ") + " s"
                report.rows.append(row)
            }
            let (ours, curl) = (pair[0].row, pair[1].row)
            guard ours.medianSeconds > 0, curl.medianSeconds > 0 else { continue }
            report.checks.append(
                String(
                    format: "%@: FormDataKit ÷ curl throughput %.2f× (median %.2f s vs %.2f s)", ours.workload,
                    curl.medianSeconds / ours.medianSeconds, ours.medianSeconds, curl.medianSeconds)
                    + roundRatios(curl, ours) { $0 >= 1 })
        }
    }

    /// One send of `side`, counted by the receiver.
    private static func measure(_ side: inout Side, receiver: AnnouncedProcess, stdoutPath: String, report: inout Report) {
        guard receiver.ask("reset") == "ok" else {
            side.failed = true
            report.failures.append("\(side.row.workload) · \(side.row.tool): the receiver did not answer")
            return
        }
        let result = runMeasured(side.command, stdoutPath: stdoutPath)
        let stats =
            receiver.ask("stats").flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Int] ?? [:]
        let (requests, bytes) = (stats["requests"] ?? -1, stats["bytes"] ?? -1)
        side.arrived += min(requests, side.forms)
        side.duplicates += max(0, requests - side.forms)
        guard result.status == 0, requests == side.forms, bytes >= side.minimumBytes else {
            side.failed = true
            report.failures.append(
                "\(side.row.workload) · \(side.row.tool): exited \(result.status), the receiver read \(requests) requests "
                    + "(\(bytes) body bytes), want \(side.forms)")
            return
        }
        side.row.seconds.append(result.seconds)
        side.row.peakRSSKiB = max(side.row.peakRSSKiB ?? 0, result.peakRSSKiB)
    }

    /// `arguments` started as an ``AnnouncedProcess`` (standard error to `stderrPath`).
    static func started(_ arguments: [String], _ stderrPath: String) throws -> AnnouncedProcess {
        switch try AnnouncedProcess.start(arguments, stderrPath: stderrPath) {
        case .running(let process): return process
        case .exited(let status, let stderr):
            throw BenchError.childFailed("\(arguments.joined(separator: " ")) exited \(status): \(stderr)")
        }
    }

    /// The child: `fault-form URL FILE` — one form (a field and FILE) sent by FormDataKit over
    /// `CurlTransport.shared` with `startSynchronous()`; fails unless the answer is 200.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2, let url = URL(string: arguments[0]) else { throw BenchError.usage("fault-form URL FILE") }
        let request = FormDataRequest(url: url)
        request.transport = CurlTransport.shared
        request.timeOutSeconds = 60
        request.addPostValue(fieldValue, forKey: "field")
        try request.addFile(arguments[1], forKey: "file")
        if let error = request.startSynchronous() { throw BenchError.childFailed("fault-form: \(error)") }
        guard request.responseStatusCode == 200 else { throw BenchError.childFailed("fault-form: status \(request.responseStatusCode)") }
    }
}
