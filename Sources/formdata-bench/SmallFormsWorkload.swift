#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// W7 small forms: three fields and a 2 KiB file part, multipart, built and sent to the loopback
/// ``DiscardReceiver`` (which reads every body) — `sequential` requests one at a time on a
/// kept-alive connection, and `parallel` requests with 64 in flight — by FormDataKit over its
/// curl transport (one `CurlTransport.shared`, a new request per send) through every entry point
/// a user calls (``SmallFormsEntryPoint``, a row each; `startSynchronous()` one at a time and
/// `startAsynchronous()` with blocks in flight keep the row name older builds compare under), Go's
/// `net/http` + `mime/multipart` (Benchmarks/peers/go-w7, built with Debian's `golang-go`; the
/// row says skipped without it) and `curl` (`--next` one at a time; `--parallel --parallel-max
/// 64`), each a process of its own; the time of a row is the process's wall time, start-up
/// included (a few milliseconds against a second or more of requests). The targets: see
/// ``checks(_:)``.
enum SmallFormsWorkload {
    static let name = "W7 small forms"
    static let ours = "FormDataKit curl (CurlTransport.shared)"
    static let fileBytes = 2048
    static let inFlight = 64
    static let fields = [("name", "a small form"), ("note", "three fields and a file"), ("index", "7")]

    static func run(sequential: Int, parallel: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        let file = try directory.generate("w7-2kib.bin", size: fileBytes, seed: 77, text: false)
        let receiver = try DiscardReceiver()
        defer { receiver.stop() }
        let url = "http://127.0.0.1:\(receiver.port)/upload"
        let go = goPeer("go-w7", in: directory)
        let hasCurl = toolExists("curl")
        var cases: [MeasuredCase] = []
        for (mode, count) in [("sequential", sequential), ("parallel", parallel)] {
            let workload = mode == "sequential" ? "\(name), \(count) one at a time" : "\(name), \(count) with \(inFlight) in flight"
            // The row's bytes: every request's body (the same form for every sender, to a few
            // bytes of boundary), so MB/s compares as requests per second does.
            let bytes = count * (fileBytes + 400)
            func row(_ tool: String, _ note: String, reference: String?) -> ResultRow {
                ResultRow(workload: workload, tool: tool, bytes: bytes, seconds: [], peakRSSKiB: 0, note: note, reference: reference)
            }
            let arguments = [mode, String(count), String(inFlight), url, file]
            let reference = go == nil ? nil : "Go net/http"
            for entry in SmallFormsEntryPoint.measured(sequential: mode == "sequential") {
                let isDefault = entry == .legacyDefault(sequential: mode == "sequential")
                cases.append(
                    MeasuredCase(
                        row: row(
                            isDefault ? ours : entry.tool,
                            "\(isDefault ? entry.tool + "; " : "")build + send, a new request each; wall time of the process",
                            reference: reference),
                        timing: .wallClock, command: [selfPath, "--child", "w7"] + arguments + [entry.rawValue], requests: count))
                if isDefault, let comparedBuild {
                    // Right after the row it is compared with, so both run in the same place of
                    // every round (a row's neighbours move its time on this machine). An older
                    // build knows only the default entry points (no sixth argument).
                    cases.append(
                        MeasuredCase(
                            row: row(comparedTool(ours), "\(comparedBuild)", reference: reference),
                            timing: .wallClock, command: [comparedBuild, "--child", "w7"] + arguments, requests: count))
                }
            }
            if let go {
                cases.append(
                    MeasuredCase(
                        row: row("Go net/http", "ref; mime/multipart + http.Client, a body built per request", reference: nil),
                        timing: .wallClock, command: [go] + arguments, requests: count))
            } else {
                report.checks.append("\(workload) · Go net/http: skipped (install Debian's golang-go for this row)")
            }
            if hasCurl {
                let config = try curlConfig(count: count, url: url, file: file, in: directory, name: "w7-\(mode).curlrc")
                let parallelArguments = mode == "parallel" ? ["--parallel", "--parallel-max", String(inFlight)] : []
                cases.append(
                    MeasuredCase(
                        row: row(
                            "curl",
                            mode == "parallel" ? "--parallel --parallel-max \(inFlight), one config file" : "--next, one connection",
                            reference: nil),
                        timing: .wallClock, command: ["curl", "-sS", "--fail"] + parallelArguments + ["-K", config], requests: count))
            }
        }
        for _ in 0..<runs {
            for index in cases.indices where !cases[index].failed {
                cases[index].measure(
                    receiver: receiver, bodyBytesAbove: fileBytes, stdoutPath: "\(directory.path)/w7-stdout", failures: &report.failures)
            }
        }
        let rows = cases.map(\.finishedRow).map { row -> ResultRow in
            var row = row
            let requests = cases.first { $0.row.tool == row.tool && $0.row.workload == row.workload }?.requests ?? 0
            if row.medianSeconds > 0 { row.note += String(format: "; %.0f requests/s", Double(requests) / row.medianSeconds) }
            return row
        }
        report.rows += rows
        report.checks += checks(rows)
    }

    /// The W7 target lines, for every entry point's row: requests per second ≥ 1.0× curl's and
    /// ≥ 0.9× Go's one at a time, ≥ 1.0× both with 64 in flight (issue 59's bars; the rows'
    /// `workload` says the mode).
    static func checks(_ rows: [ResultRow]) -> [String] {
        var lines: [String] = []
        for workload in Set(rows.map(\.workload)).sorted() {
            let oneAtATime = workload.hasSuffix("one at a time")
            let mine = rows.filter {
                $0.workload == workload && $0.tool.hasPrefix("FormDataKit") && !$0.tool.hasSuffix(comparedTool(""))
                    && $0.medianSeconds > 0
            }
            for mine in mine {
                for (peer, bar) in [("Go net/http", oneAtATime ? 0.9 : 1.0), ("curl", 1.0)] {
                    guard let other = rows.first(where: { $0.workload == workload && $0.tool == peer }), other.medianSeconds > 0
                    else {
                        lines.append("Target (\(workload)): \(mine.tool) ≥ \(bar)× \(peer): \(peer) not measured")
                        continue
                    }
                    let ratio = other.medianSeconds / mine.medianSeconds
                    lines.append(
                        String(
                            format: "Target (%@): %@ ≥ %.1f× %@ in requests/s: %.2f× — %@", workload, mine.tool, bar, peer, ratio,
                            ratio >= bar ? "met" : "NOT met") + roundRatios(other, mine) { $0 >= bar })
                }
            }
        }
        return lines
    }

    /// A curl config file with `count` transfers of the form, each its own `next` section with
    /// `extra` lines (W9: its trust and HTTP version, which `next` does not carry over).
    static func curlConfig(
        count: Int, url: String, file: String, in directory: WorkloadDirectory, name: String, extra: String = ""
    ) throws -> String {
        var one = "url = \"\(url)\"\noutput = \"/dev/null\"\n" + extra
        for (key, value) in fields { one += "form = \"\(key)=\(value)\"\n" }
        one += "form = \"file=@\(file)\"\n"
        let text = Array(repeating: one, count: count).joined(separator: "next\n")
        let path = "\(directory.path)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The child: `w7 sequential|parallel COUNT IN_FLIGHT URL FILE [ENTRY]` — the form built and
    /// sent COUNT times through `CurlTransport.shared` by ENTRY (a ``SmallFormsEntryPoint``; by
    /// default `startSynchronous()` one at a time, `startAsynchronous()` and blocks IN_FLIGHT at
    /// once); fails unless every answer is 200.
    static func child(_ arguments: [String]) throws {
        let usage =
            "w7 sequential|parallel COUNT IN_FLIGHT URL FILE [\(SmallFormsEntryPoint.allCases.map(\.rawValue).joined(separator: "|"))]"
        guard arguments.count == 5 || arguments.count == 6, let count = Int(arguments[1]), let inFlight = Int(arguments[2]),
            let url = URL(string: arguments[3])
        else { throw BenchError.usage(usage) }
        let sequential = arguments[0] == "sequential"
        let entry = arguments.count == 6 ? SmallFormsEntryPoint(rawValue: arguments[5]) : .legacyDefault(sequential: sequential)
        guard let entry, entry != .synchronous || sequential else { throw BenchError.usage(usage) }
        try entry.send(count: count, inFlight: sequential ? 1 : inFlight, url: url, file: arguments[4])
    }
}

/// Failures of a child's sends, from any thread.
final class FailureLog: @unchecked Sendable {
    // `@unchecked`: `messages` is touched only under `lock`.
    private let lock = NSLock()
    private var messages: [String] = []

    func add(_ message: String) { lock.withLock { messages.append(message) } }
    var count: Int { lock.withLock { messages.count } }
    var first: String? { lock.withLock { messages.first } }
}
