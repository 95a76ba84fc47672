import FormDataKit
import Foundation

/// `queue` (W8): 200 uploads (20 with `--quick`) of one field plus one 1 MiB file, multipart,
/// through ONE `NetworkQueue` running 8 at a time (`maxConcurrentOperationCount = 8`, ASI's
/// `ASINetworkQueue` port, over `CurlTransport.shared`), against one `curl --parallel
/// --parallel-max 8` reading the same uploads from a config file, to the loopback
/// ``DiscardReceiver``. Each row's time is the wall time of its process (start-up included); the
/// driver checks that the receiver read every request completely, the child that every answer
/// was 200. The target: the queue at least as fast as curl, in the same run.
///
/// Beside them, each tool's fixed cost per process, in the same rounds: the same child and the
/// same curl with ONE upload (start-up, the first connection, one 1 MiB upload, exit). A line
/// after the target compares the two rows less their tool's fixed cost (what the other uploads
/// added): information on where a gap lies, never the target.
enum QueueWorkload {
    static let name = "W8 queue"
    static let ours = "FormDataKit NetworkQueue (8 at a time)"
    static let peer = "curl --parallel"
    static let fileBytes = 1 << 20
    static let width = 8

    static func run(uploads: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        let file = try directory.generate("queue-1mib.bin", size: fileBytes, seed: 88, text: false)
        let receiver = try DiscardReceiver()
        defer { receiver.stop() }
        let url = "http://127.0.0.1:\(receiver.port)/upload"
        let workload = "\(name), \(uploads)× 1 MiB, \(width) at a time"
        let fixedCostWorkload = "\(name), 1× 1 MiB (a process's fixed cost)"
        let hasCurl = toolExists("curl")
        func row(_ tool: String, _ note: String, workload: String = workload, uploads: Int = uploads) -> ResultRow {
            ResultRow(
                workload: workload, tool: tool, bytes: uploads * fileBytes, seconds: [], peakRSSKiB: 0, note: note,
                reference: hasCurl ? peer : nil)
        }
        var cases = [
            MeasuredCase(
                row: row(ours, "one process: \(uploads) FormDataRequests added to one queue, go(), wait; wall time incl. start-up"),
                timing: .wallClock, command: [selfPath, "--child", "queue", url, String(uploads), String(width), file],
                requests: uploads),
            MeasuredCase(
                row: row(
                    ours, "the same child with one upload: start-up, one connection, one upload, exit",
                    workload: fixedCostWorkload, uploads: 1),
                timing: .wallClock, command: [selfPath, "--child", "queue", url, "1", String(width), file], requests: 1),
        ]
        if let comparedBuild {
            cases.append(
                MeasuredCase(
                    row: row(comparedTool(ours), "\(comparedBuild)"), timing: .wallClock,
                    command: [comparedBuild, "--child", "queue", url, String(uploads), String(width), file], requests: uploads))
        }
        if hasCurl {
            var one = "url = \"\(url)\"\noutput = \"/dev/null\"\nform = \"field=value\"\nform = \"file=@\(file)\"\n"
            one += "header = \"Expect:\"\n"
            let config = "\(directory.path)/queue.curlrc"
            try Array(repeating: one, count: uploads).joined(separator: "next\n").write(toFile: config, atomically: true, encoding: .utf8)
            cases.append(
                MeasuredCase(
                    row: row(peer, "ref; one curl, --parallel --parallel-max \(width), one config file, no Expect: 100-continue"),
                    timing: .wallClock,
                    command: ["curl", "-sS", "--fail", "--parallel", "--parallel-max", String(width), "-K", config], requests: uploads))
            let oneConfig = "\(directory.path)/queue-one.curlrc"
            try one.write(toFile: oneConfig, atomically: true, encoding: .utf8)
            cases.append(
                MeasuredCase(
                    row: row(peer, "ref; the same curl with one upload", workload: fixedCostWorkload, uploads: 1),
                    timing: .wallClock,
                    command: ["curl", "-sS", "--fail", "--parallel", "--parallel-max", String(width), "-K", oneConfig], requests: 1))
        } else {
            report.checks.append("\(workload) · curl: skipped (install curl for this row)")
        }
        for _ in 0..<runs {
            for index in cases.indices where !cases[index].failed {
                cases[index].measure(
                    receiver: receiver, bodyBytesAbove: fileBytes, stdoutPath: "\(directory.path)/queue-stdout",
                    failures: &report.failures)
            }
        }
        let rows = cases.map(\.finishedRow)
        report.rows += rows
        func measured(_ tool: String, _ workload: String) -> ResultRow? {
            rows.first { $0.tool == tool && $0.workload == workload && $0.medianSeconds > 0 }
        }
        if let mine = measured(ours, workload), let other = measured(peer, workload) {
            let ratio = other.medianSeconds / mine.medianSeconds
            report.checks.append(
                String(format: "Target (%@): %@ ≥ 1.0× %@: %.2f× — %@", workload, ours, peer, ratio, ratio >= 1.0 ? "met" : "NOT met")
                    + roundRatios(other, mine) { $0 >= 1.0 })
            if let myFixed = measured(ours, fixedCostWorkload), let otherFixed = measured(peer, fixedCostWorkload) {
                report.checks.append(fixedCostLine(mine: mine, myFixed: myFixed, other: other, otherFixed: otherFixed))
            }
        }
    }

    /// The information line: both rows less their tool's fixed cost per process, and the ratio.
    static func fixedCostLine(mine: ResultRow, myFixed: ResultRow, other: ResultRow, otherFixed: ResultRow) -> String {
        let myRest = mine.medianSeconds - myFixed.medianSeconds
        let otherRest = other.medianSeconds - otherFixed.medianSeconds
        var line = String(
            format: "Information (%@): fixed cost of a process (one upload) %.1f ms against %@'s %.1f ms; "
                + "the rest (the other uploads) %.3f against %.3f s",
            mine.workload, myFixed.medianSeconds * 1000, peer, otherFixed.medianSeconds * 1000, myRest, otherRest)
        if myRest > 0, otherRest > 0 { line += String(format: " = %.2f× (not the target)", otherRest / myRest) }
        return line
    }

    /// The child: `queue URL COUNT WIDTH FILE` — COUNT requests of one field and the file added
    /// to one `NetworkQueue` with `maxConcurrentOperationCount = WIDTH`, then `go()` and
    /// `waitUntilAllOperationsAreFinished()`; fails unless every answer is 200.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 4, let url = URL(string: arguments[0]), let count = Int(arguments[1]), let width = Int(arguments[2])
        else { throw BenchError.usage("queue URL COUNT WIDTH FILE") }
        let queue = NetworkQueue.queue()
        queue.maxConcurrentOperationCount = width
        queue.shouldCancelAllRequestsOnFailure = false
        var requests: [FormDataRequest] = []
        for index in 0..<count {
            let request = FormDataRequest(url: url)
            request.transport = CurlTransport.shared
            request.timeOutSeconds = 120
            request.addPostValue("value \(index)", forKey: "field")
            try request.addFile(arguments[3], forKey: "file")
            try queue.addOperation(request)
            requests.append(request)
        }
        queue.go()
        queue.waitUntilAllOperationsAreFinished()
        let failed = requests.enumerated().filter { $0.element.error != nil || $0.element.responseStatusCode != 200 }
        if let (index, request) = failed.first {
            throw BenchError.childFailed(
                "queue: \(failed.count) of \(count) failed; upload \(index): \(request.error.map { "\($0)" } ?? "status \(request.responseStatusCode)")"
            )
        }
    }
}
