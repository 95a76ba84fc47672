import Foundation

/// W5 over TLS: W5's form (ten fields and three files, the main size) sent once per run to Go
/// `net/http`'s TLS receiver (Benchmarks/peers/go-w9, which reads every body) speaking h2, then
/// one speaking HTTP/1.1 only — FormDataKit over its curl transport (`httpVersion` `.http2` or
/// `.http1_1`, trusting the receiver's certificate) against `curl --http2|--http1.1 -F` in the
/// same run, the reference of the "this ÷ ref" column. Each sender is a child process, so its
/// peak RSS is its own; a row's time is the process's wall time. Skipped without `go`.
enum H2SendWorkload {
    static let name = "W5 send over TLS"
    /// The target (issue 57): over h2, FormDataKit's speed at least this share of `curl --http2 -F`'s.
    static let targetSpeedRatio = 0.9

    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        guard let go = goPeer("go-w9", in: directory) else {
            report.checks.append("\(name): skipped (install Debian's golang-go: the receiver is Go's)")
            return
        }
        let bytes = totalMiB << 20
        let files = try [bytes / 2, bytes / 3, bytes - bytes / 2 - bytes / 3].enumerated().map { index, size in
            try directory.generate("w5tls-\(index).\(index == 2 ? "txt" : "bin")", size: size, seed: UInt64(index + 5), text: index == 2)
        }
        for version in ["h2", "h1"] {
            let receiver = try TLSReceiver(go: go, mode: version, directory: "\(directory.path)/w5tls-\(version)")
            defer { receiver.stop() }
            let url = "https://127.0.0.1:\(receiver.port)/upload"
            let label = version == "h2" ? "HTTP/2" : "HTTP/1.1"
            let curlFlag = version == "h2" ? "--http2" : "--http1.1"
            let reference = "curl \(curlFlag) -F"
            let workload = "\(name), \(label), \(totalMiB) MiB"
            func row(_ tool: String, _ note: String) -> ResultRow {
                ResultRow(workload: workload, tool: tool, bytes: bytes, seconds: [], peakRSSKiB: 0, note: note, reference: reference)
            }
            var cases = [
                MeasuredCase(
                    row: row(
                        SendWorkload.curlTransportTool, "httpVersion \(version == "h2" ? ".http2" : ".http1_1"); build + send, streamed"),
                    timing: .wallClock,
                    command: [selfPath, "--child", "send", "--tls", receiver.certificate, version, url] + files)
            ]
            if toolExists("curl") {
                var command = ["curl", "-sS", "-o", "/dev/null", "--fail", curlFlag, "--cacert", receiver.certificate, "-H", "Expect:"]
                for index in 0..<10 { command += ["-F", "field\(index)=value \(index)"] }
                for (index, file) in files.enumerated() { command += ["-F", "file\(index)=@\(file)"] }
                cases.append(MeasuredCase(row: row(reference, "ref; no Expect"), timing: .wallClock, command: command + [url]))
            }
            var overH2 = Array(repeating: [Int](), count: cases.count)
            for _ in 0..<runs {
                for index in cases.indices where !cases[index].failed {
                    cases[index].measure(
                        receiver: receiver, bodyBytesAbove: bytes, stdoutPath: "\(directory.path)/w5tls-stdout", failures: &report.failures)
                    overH2[index].append(receiver.h2Requests)
                    let want = version == "h2" ? 1 : 0
                    if !cases[index].failed && receiver.h2Requests != want {
                        cases[index].failed = true
                        report.failures.append(
                            "\(workload) · \(cases[index].row.tool): \(receiver.h2Requests) requests over h2 (want \(want))")
                    }
                }
            }
            report.rows += cases.map(\.finishedRow)
            report.checks += check(
                report.rows.filter { $0.workload == workload }, reference: reference, workload: workload, h2: version == "h2")
        }
    }

    /// The target line: over h2 at 1 GiB, FormDataKit ≥ 0.9× `curl --http2 -F`; over HTTP/1.1
    /// (and at other sizes) the same ratio, for the record.
    static func check(_ rows: [ResultRow], reference: String, workload: String, h2: Bool) -> [String] {
        guard let ours = rows.first(where: { $0.tool == SendWorkload.curlTransportTool }), ours.megabytesPerSecond > 0,
            let curl = rows.first(where: { $0.tool == reference }), curl.megabytesPerSecond > 0
        else { return ["Target (\(workload)): \(SendWorkload.curlTransportTool) ≥ \(targetSpeedRatio)× \(reference): not measured"] }
        let ratio = ours.megabytesPerSecond / curl.megabytesPerSecond
        let verdict = !h2 || !workload.hasSuffix(" 1024 MiB") ? "for the record" : ratio >= targetSpeedRatio ? "met" : "NOT met"
        return [
            String(
                format: "Target (%@): %@ ≥ %.1f× %@: %.1f vs %.1f MB/s = %.2f× — %@", workload, SendWorkload.curlTransportTool,
                targetSpeedRatio, reference, ours.megabytesPerSecond, curl.megabytesPerSecond, ratio, verdict)
                + roundRatios(curl, ours) { $0 >= targetSpeedRatio }
        ]
    }
}
