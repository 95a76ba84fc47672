import FormDataKit
import Foundation

// formdata-bench: FormDataKit against peers, in one run, with ratios.
//
//   swift run -c release formdata-bench [--quick] [--runs N] [--size-mib N] [--out FILE] [--chart FILE.png] [WORKLOAD ...]
//
// Workloads: fields (W1/W2: 10,000 fields url-encoded and multipart; peers: Python urllib,
// urllib3, requests-toolbelt), spool (W3: 3 files + 10 fields, multipart, spooled; peer: cat),
// spool-copy (W3 with the copy strategies the spooler does not use: sendfile, other buffers),
// gzip (level 6 vs gzip -6 / Python zlib, adaptive vs level 6, 4× body RSS; see GzipWorkload),
// send (W5: 3 files + 10 fields built and sent to a loopback receiver that discards, at the
// --size-mib size, 10 MiB and 100 KiB; FormDataKit over curl (the default), AsyncHTTPClient and
// URLSession vs curl -F; see SendWorkload), concurrent (200 uploads of 1 MiB at once through one
// transport: FormDataKit curl and AsyncHTTPClient vs 200 curl -F processes; see
// ConcurrentWorkload), w7 (small forms: three fields and a 2 KiB file, 3,000 one at a time and
// 10,000 with 64 in flight; FormDataKit curl vs Go net/http and curl; see SmallFormsWorkload), w9
// (W7's form, 10,000 with 64 in flight over TLS to one origin, HTTP/2 then HTTP/1.1, against a Go
// receiver; FormDataKit vs Go net/http and curl --parallel; see H2SmallFormsWorkload), w5-tls
// (W5's form at --size-mib sent once per run over TLS to the same Go receiver, h2 then HTTP/1.1;
// FormDataKit vs curl --http2|--http1.1 -F; see H2SendWorkload),
// queue (W8: 200 uploads of 1 MiB through one NetworkQueue, 8 at a time, vs curl --parallel
// --parallel-max 8; see QueueWorkload), resume (a multipart form of --size-mib MiB, 256 by default,
// sent with shouldResumeInterruptedUploads to Apple's resumable-upload server handler through a
// relay: uninterrupted, and cut three times; see ResumeWorkload — it needs the ResumableUploadServer
// executable built with the ResumableUploadServer trait, beside this one or --resumable-server PATH,
// and is skipped without it), faults (uploads on a bad network between two network namespaces
// of its own: a NetworkQueue through 5 % loss, 6 Mbit/s and a 6 s black hole, keyed and keyless;
// a flapping link with Retry-After; a black hole during responses; W7's small forms and a 64 MiB
// form through 200 ms ± 50 ms of delay and 2 % loss against curl; a 256 MiB resumable upload
// through three black holes, which needs the ResumableUploadServer as `resume` does; root, `ip`,
// `tc` and `nft` needed, skipped otherwise; see FaultWorkload, FaultDelayWorkload and
// FaultResumeWorkload; `faults-delay` and `faults-resume` run one of those two alone).
// --quick uses small sizes (CI runs it so the harness cannot rot). --out FILE writes the results as
// Markdown: the command, the date and the machine, then one table per workload with its target
// lines (the shape of Benchmarks/RESULTS.md). --compare-with BENCH adds, in
// W5 (the curl transport's default rows), W7 and W8, a row for another build's `formdata-bench`
// (e.g. a copy of main's) beside this one, measured in the same run, alternating with it.
// FormDataKit's side of each workload runs in `formdata-bench-child` (FormDataKit only, built
// with this target), except the senders of W5, concurrent, W7, queue and resume, which run as `--child send`,
// `--child concurrent`, `--child w7`, `--child queue` and `--child resume`. `--child receiver` runs
// the workloads' loopback receiver alone (it prints `PORT n` and serves until its standard input
// closes), to profile a sender against it outside a run.

let usage =
    "usage: formdata-bench [--quick] [--runs N] [--size-mib N] [--compare-with BENCH] [--resumable-server PATH] [--out FILE] [--chart FILE.png] [fields|spool|spool-copy|multipart-kit|w4|w6|send|concurrent|w7|w9|w5-tls|stream|queue|resume|faults|faults-delay|faults-resume ...]"

func main() throws {
    var arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "--child" {
        guard arguments.count >= 2 else { throw BenchError.usage(usage) }
        switch arguments[1] {
        case "send": try SendWorkload.child(Array(arguments.dropFirst(2)))
        case "concurrent": try ConcurrentWorkload.child(Array(arguments.dropFirst(2)))
        case "w7": try SmallFormsWorkload.child(Array(arguments.dropFirst(2)))
        case "stream": try StreamWorkload.child(Array(arguments.dropFirst(2)))
        case "w9": try H2SmallFormsWorkload.child(Array(arguments.dropFirst(2)))
        case "queue": try QueueWorkload.child(Array(arguments.dropFirst(2)))
        case "resume": try ResumeWorkload.child(Array(arguments.dropFirst(2)))
        case "receiver": try DiscardReceiver.serveUntilInputCloses()
        case "fault-receiver": try FaultReceiver.child(Array(arguments.dropFirst(2)))
        case "fault-queue": try FaultQueueClient.child(Array(arguments.dropFirst(2)))
        case "delay-relay": try DelayRelay.child(Array(arguments.dropFirst(2)))
        case "fault-form": try FaultDelayWorkload.child(Array(arguments.dropFirst(2)))
        case "fault-resume": try FaultResumeClient.child(Array(arguments.dropFirst(2)))
        default: throw BenchError.usage("unknown child \(arguments[1])")
        }
        return
    }
    var quick = false
    var runs: Int?
    var sizeMiB: Int?
    var outPath: String?
    var chartPath: String?
    var resumableServer: String?
    var workloads: [String] = []
    while !arguments.isEmpty {
        let argument = arguments.removeFirst()
        switch argument {
        case "--quick": quick = true
        case "--runs": runs = arguments.isEmpty ? nil : Int(arguments.removeFirst())
        case "--size-mib": sizeMiB = arguments.isEmpty ? nil : Int(arguments.removeFirst())
        case "--out": outPath = arguments.isEmpty ? nil : arguments.removeFirst()
        case "--chart": chartPath = arguments.isEmpty ? nil : arguments.removeFirst()
        case "--resumable-server":
            guard !arguments.isEmpty else { throw BenchError.usage(usage) }
            resumableServer = arguments.removeFirst()
        case "--compare-with":
            guard !arguments.isEmpty else { throw BenchError.usage(usage) }
            comparedBuild = arguments.removeFirst()
        case "-h", "--help":
            print(usage)
            return
        default: workloads.append(argument)
        }
    }
    if workloads.isEmpty {
        workloads = [
            "fields", "spool", "spool-copy", "multipart-kit", "w4", "w6", "send", "concurrent", "w7", "w9", "w5-tls", "stream", "queue",
            "resume", "faults",
        ]
    }
    let runCount = runs ?? (quick ? 1 : 3)
    let directory = try WorkloadDirectory()
    let started = ISO8601DateFormatter().string(from: Date())
    var report = Report(title: "formdata-bench \(quick ? "(quick) " : "")— \(started)")
    let loadBefore = loadAverage()
    for workload in workloads {
        let (rowsBefore, checksBefore) = (report.rows.count, report.checks.count)
        defer {
            report.sections.append(
                Report.Section(workload: workload, rows: rowsBefore..<report.rows.count, checks: checksBefore..<report.checks.count))
        }
        switch workload {
        case "fields":
            report.rows += try FieldsWorkload.run(quick: quick, runs: runCount, in: directory)
        case "spool":
            report.rows += try SpoolWorkload.run(totalMiB: sizeMiB ?? (quick ? 8 : 1024), runs: runCount, in: directory)
        case "spool-copy":
            report.rows += try SpoolCopyWorkload.run(totalMiB: sizeMiB ?? (quick ? 8 : 1024), runs: runCount, in: directory)
        case "multipart-kit":
            report.rows += try MultipartKitWorkload.run(quick: quick, w3MiB: sizeMiB ?? (quick ? 8 : 1024), runs: runCount, in: directory)
        case "w4":
            report.rows += try W4Workload.run(totalMiB: sizeMiB ?? (quick ? 8 : 1024), runs: runCount, in: directory)
        case "w6", "gzip":
            report.rows += try GzipWorkload.run(totalMiB: sizeMiB ?? (quick ? 4 : 256), runs: runCount, in: directory)
        case "send":
            try SendWorkload.run(totalMiB: sizeMiB ?? (quick ? 8 : 1024), runs: runCount, in: directory, into: &report)
        case "concurrent":
            try ConcurrentWorkload.run(uploads: quick ? 20 : 200, runs: runCount, in: directory, into: &report)
        case "w7", "small":
            try SmallFormsWorkload.run(
                sequential: quick ? 100 : 3000, parallel: quick ? 300 : 10_000, runs: runCount, in: directory, into: &report)
        case "w5-tls", "send-h2":
            try H2SendWorkload.run(totalMiB: sizeMiB ?? (quick ? 8 : 1024), runs: runCount, in: directory, into: &report)
        case "w9", "h2":
            try H2SmallFormsWorkload.run(count: quick ? 300 : 10_000, runs: runCount, in: directory, into: &report)
        case "stream", "w10":
            try StreamWorkload.run(totalMiB: sizeMiB ?? (quick ? 8 : 1024), runs: runCount, in: directory, into: &report)
        case "queue", "w8":
            try QueueWorkload.run(uploads: quick ? 20 : 200, runs: runCount, in: directory, into: &report)
        case "faults":
            try FaultWorkload.run(
                uploads: quick ? 20 : 100, runs: runs ?? (quick ? 1 : 3),
                hole: quick ? .init(start: 0.5, length: 4) : .init(start: 5, length: 6), in: directory, into: &report)
            try FaultWorkload.runFlapping(uploads: quick ? 12 : 40, runs: runs ?? (quick ? 1 : 3), in: directory, into: &report)
            try FaultWorkload.runResponses(
                uploads: quick ? 8 : 20, runs: runs ?? (quick ? 1 : 3), hole: .init(start: 1.5, length: 4), in: directory, into: &report)
            try FaultDelayWorkload.run(
                smallForms: quick ? 100 : 300, formMiB: quick ? 16 : 64, runs: runs ?? (quick ? 1 : 3), in: directory, into: &report)
            try FaultResumeWorkload.run(
                totalMiB: quick ? 32 : 256, runs: runs ?? (quick ? 1 : 3), server: resumableServer, in: directory, into: &report)
        case "faults-delay":
            try FaultDelayWorkload.run(
                smallForms: quick ? 100 : 300, formMiB: quick ? 16 : 64, runs: runs ?? (quick ? 1 : 3), in: directory, into: &report)
        case "faults-resume":
            try FaultResumeWorkload.run(
                totalMiB: quick ? 32 : 256, runs: runs ?? (quick ? 1 : 3), server: resumableServer, in: directory, into: &report)
        case "resume":
            try ResumeWorkload.run(
                totalMiB: sizeMiB ?? (quick ? 8 : 256), runs: runCount, server: resumableServer, in: directory, into: &report)
        default:
            throw BenchError.usage("unknown workload \(workload)\n\(usage)")
        }
    }
    report.machine = [
        "\(ProcessInfo.processInfo.activeProcessorCount) cores; load average (1, 5, 15 min) at the start: \(loadBefore), at the end: \(loadAverage()) — other work on the machine skews the figures"
    ]
    let table = report.markdown()
    print(table)
    if let outPath {
        let command = (["formdata-bench"] + CommandLine.arguments.dropFirst()).map(shellWord).joined(separator: " ")
        try report.resultsMarkdown(command: command, date: started).write(toFile: outPath, atomically: true, encoding: .utf8)
    }
    if let chartPath { try drawChart(report, to: chartPath, in: directory) }
    if !report.failures.isEmpty { throw BenchError.childFailed("\(report.failures.count) case(s) failed (see FAILED above)") }
}

/// `word` as a shell would read it back: bare when it has nothing special, else single-quoted.
func shellWord(_ word: String) -> String {
    let safe = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_./=:,+@%"))
    let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { safe.contains($0) }
    return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// The first three fields of `/proc/loadavg` ("?" where it cannot be read).
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// Draws `report` as a PNG bar chart with `Benchmarks/chart.py` (matplotlib); says so and goes on
/// when python3 or matplotlib is missing.
func drawChart(_ report: Report, to path: String, in directory: WorkloadDirectory) throws {
    let json = "\(directory.path)/results.json"
    try report.chartJSON().write(to: URL(fileURLWithPath: json))
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Benchmarks/chart.py").standardized.path
    let result = runMeasured(["python3", script, json, path])
    switch result.status {
    case 0: print("chart: \(path)")
    case 3: print("chart: skipped (matplotlib is not installed: pip install matplotlib)")
    default: throw BenchError.childFailed("Benchmarks/chart.py exited \(result.status)")
    }
}

do {
    try main()
} catch {
    FileHandle.standardError.write(Data("formdata-bench: \(error)\n".utf8))
    exit(1)
}
