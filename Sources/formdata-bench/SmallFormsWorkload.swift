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
/// curl transport (one `CurlTransport.shared`, a new `FormDataRequest` per send), Go's
/// `net/http` + `mime/multipart` (Benchmarks/peers/go-w7, built with Debian's `golang-go`; the
/// row says skipped without it) and `curl` (`--next` one at a time; `--parallel --parallel-max
/// 64`), each a process of its own; the time of a row is the process's wall time, start-up
/// included (a few milliseconds against a second or more of requests). The target: FormDataKit's
/// requests per second at least those of Go and of curl, in the same run.
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
        let go = goPeer(in: directory)
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
            cases.append(
                MeasuredCase(
                    row: row(
                        ours, "build + send, a new FormDataRequest each; wall time of the process",
                        reference: go == nil ? nil : "Go net/http"),
                    timing: .wallClock, command: [selfPath, "--child", "w7"] + arguments, requests: count))
            if let comparedBuild {
                cases.append(
                    MeasuredCase(
                        row: row(comparedTool(ours), "\(comparedBuild)", reference: go == nil ? nil : "Go net/http"),
                        timing: .wallClock, command: [comparedBuild, "--child", "w7"] + arguments, requests: count))
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

    /// The W7 target lines: FormDataKit's requests per second ≥ 1.0× Go's and curl's, per mode.
    static func checks(_ rows: [ResultRow]) -> [String] {
        var lines: [String] = []
        for workload in Set(rows.map(\.workload)).sorted() {
            guard let mine = rows.first(where: { $0.workload == workload && $0.tool == ours }), mine.medianSeconds > 0 else { continue }
            for peer in ["Go net/http", "curl"] {
                guard let other = rows.first(where: { $0.workload == workload && $0.tool == peer }), other.medianSeconds > 0 else {
                    lines.append("Target (\(workload)): ≥ 1.0× \(peer): \(peer) not measured")
                    continue
                }
                let ratio = other.medianSeconds / mine.medianSeconds
                lines.append(
                    String(
                        format: "Target (%@): %@ ≥ 1.0× %@ in requests/s: %.2f× — %@", workload, ours, peer, ratio,
                        ratio >= 1.0 ? "met" : "NOT met") + roundRatios(other, mine) { $0 >= 1.0 })
            }
        }
        return lines
    }

    /// The Go peer built into `directory` (once per run of the harness), or nil without `go`.
    static func goPeer(in directory: WorkloadDirectory) -> String? {
        guard toolExists("go") else { return nil }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Benchmarks/peers/go-w7/main.go").path
        let binary = "\(directory.path)/go-w7"
        if FileManager.default.isExecutableFile(atPath: binary) { return binary }
        let built = runMeasured(["go", "build", "-o", binary, source], stdoutPath: "\(directory.path)/go-build-stdout")
        return built.status == 0 ? binary : nil
    }

    /// A curl config file with `count` transfers of the form, each its own `next` section.
    static func curlConfig(count: Int, url: String, file: String, in directory: WorkloadDirectory, name: String) throws -> String {
        var one = "url = \"\(url)\"\noutput = \"/dev/null\"\n"
        for (key, value) in fields { one += "form = \"\(key)=\(value)\"\n" }
        one += "form = \"file=@\(file)\"\n"
        let text = Array(repeating: one, count: count).joined(separator: "next\n")
        let path = "\(directory.path)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The child: `w7 sequential|parallel COUNT IN_FLIGHT URL FILE` — the form built and sent
    /// COUNT times through `CurlTransport.shared`, one at a time (`startSynchronous()`) or
    /// IN_FLIGHT at once (`startAsynchronous()` and a completion block); fails unless every answer is 200.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 5, let count = Int(arguments[1]), let inFlight = Int(arguments[2]), let url = URL(string: arguments[3])
        else { throw BenchError.usage("w7 sequential|parallel COUNT IN_FLIGHT URL FILE") }
        let file = arguments[4]
        if arguments[0] == "sequential" {
            // One at a time, as an ASI caller sends in a loop: startSynchronous.
            for index in 0..<count {
                let request = FormDataRequest(url: url)
                request.transport = CurlTransport.shared
                request.timeOutSeconds = 60
                for (key, value) in fields { request.addPostValue(value, forKey: key) }
                try request.addFile(file, forKey: "file")
                if let error = request.startSynchronous() { throw BenchError.childFailed("w7: send \(index + 1) failed: \(error)") }
                guard request.responseStatusCode == 200 else {
                    throw BenchError.childFailed("w7: send \(index + 1): status \(request.responseStatusCode)")
                }
            }
            return
        }
        let slots = DispatchSemaphore(value: arguments[0] == "parallel" ? max(1, inFlight) : 1)
        let done = DispatchGroup()
        let failures = FailureLog()
        for _ in 0..<count {
            slots.wait()
            let request = FormDataRequest(url: url)
            request.transport = CurlTransport.shared
            request.timeOutSeconds = 60
            for (key, value) in fields { request.addPostValue(value, forKey: key) }
            try request.addFile(file, forKey: "file")
            done.enter()
            request.completionBlock = { [unowned request] in
                if request.responseStatusCode != 200 { failures.add("status \(request.responseStatusCode)") }
                slots.signal()
                done.leave()
            }
            request.failedBlock = { [unowned request] in
                failures.add("\(request.error.map { "\($0)" } ?? "failed")")
                slots.signal()
                done.leave()
            }
            request.startAsynchronous()
        }
        done.wait()
        if let first = failures.first { throw BenchError.childFailed("w7: \(failures.count) of \(count) failed; first: \(first)") }
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
