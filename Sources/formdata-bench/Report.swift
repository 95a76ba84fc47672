import Foundation

/// One measured row of the benchmark table.
struct ResultRow {
    var workload: String
    var tool: String
    var bytes: Int
    var seconds: [Double]
    var peakRSSKiB: Int?
    var note: String = ""
    /// The tool of the row in the same workload this row's speed is compared with in the
    /// "this ÷ ref" column (`curl -F` in W5 and `concurrent`), or nil for no comparison.
    var reference: String? = nil

    var medianSeconds: Double { median(seconds) }
    var megabytesPerSecond: Double { medianSeconds > 0 ? Double(bytes) / 1e6 / medianSeconds : 0 }
}

/// Collects rows and writes them as a Markdown table, with each peer's ratio to FormDataKit and,
/// where a row names a reference, its speed relative to that reference row; then the target
/// checks (met / not met) and the failures.
struct Report {
    var title: String
    var rows: [ResultRow] = []
    /// Lines such as "Target (W5 send 1024 MiB): … = 0.97× — met", printed under the table.
    var checks: [String] = []
    /// What failed (a row whose child exited non-zero, a wrong byte count); printed under the
    /// table, and the run exits 1.
    var failures: [String] = []
    /// Lines about the machine (cores, load average before and after), printed under the title:
    /// other work on the machine skews the figures.
    var machine: [String] = []

    /// The rows and checks each workload of the run added, in run order, for `resultsMarkdown`.
    var sections: [Section] = []

    /// One workload of the run (as named on the command line) and what it added to the report.
    struct Section {
        var workload: String
        var rows: Range<Int>
        var checks: Range<Int>
    }

    /// The whole run as one table, with the target checks and failures under it: what the run
    /// prints.
    func markdown() -> String {
        var lines = ["## \(title)", ""] + (machine.isEmpty ? [] : machine.map { "- \($0)" } + [""])
        lines += table(rows)
        if !checks.isEmpty { lines += [""] + checks.map { "- \($0)" } }
        if !failures.isEmpty { lines += ["", "FAILED:"] + failures.map { "- \($0)" } }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The run as `--out` writes it (the shape of `Benchmarks/RESULTS.md`): the command, the date
    /// and the machine, then one table per workload with that workload's target checks under it.
    func resultsMarkdown(command: String, date: String) -> String {
        var lines = [
            "# formdata-bench results", "",
            "Written by `formdata-bench --out`: one table per workload of one run, the peers measured in the same run, "
                + "alternating. Figures from a shared machine move between runs: compare rows of one run. "
                + "Earlier runs are in `Benchmarks/HISTORY.md`; how to read the columns and the target lines is the DocC "
                + "article Performance.",
            "",
            "- Command: `\(command)`",
            "- Date: \(date)",
        ]
        lines += machine.map { "- Machine: \($0)" }
        let parts = sections.isEmpty ? [Section(workload: "all", rows: rows.indices, checks: checks.indices)] : sections
        for section in parts {
            lines += ["", "## \(section.workload)", ""]
            let sectionRows = Array(rows[section.rows])
            lines += sectionRows.isEmpty ? ["No rows: its cases were skipped."] : table(sectionRows)
            let sectionChecks = checks[section.checks]
            if !sectionChecks.isEmpty { lines += [""] + sectionChecks.map { "- \($0)" } }
        }
        if !failures.isEmpty { lines += ["", "## Failed", ""] + failures.map { "- \($0)" } }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `shown` as a Markdown table; each row's ratios are against the rows of its workload in the
    /// whole report.
    private func table(_ shown: [ResultRow]) -> [String] {
        var lines = [
            "| workload | tool | bytes | median s (runs) | MB/s | peak RSS MiB | FormDataKit ÷ this | this ÷ ref | note |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for row in shown {
            let ours = rows.first { $0.workload == row.workload && $0.tool.hasPrefix("FormDataKit") }
            let ratio =
                ours.map { row.megabytesPerSecond > 0 ? String(format: "%.2f×", $0.megabytesPerSecond / row.megabytesPerSecond) : "–" }
                ?? "–"
            let reference = row.reference.flatMap { tool in rows.first { $0.workload == row.workload && $0.tool == tool } }
            let referenceRatio =
                reference.map {
                    row.megabytesPerSecond > 0 && $0.megabytesPerSecond > 0
                        ? String(format: "%.2f×", row.megabytesPerSecond / $0.megabytesPerSecond) : "–"
                } ?? "–"
            let rss = row.peakRSSKiB.map { String(format: "%.1f", Double($0) / 1024) } ?? "–"
            lines.append(
                "| \(row.workload) | \(row.tool) | \(row.bytes) | \(String(format: row.medianSeconds < 0.01 ? "%.5f" : "%.3f", row.medianSeconds)) (\(row.seconds.count)) | \(String(format: "%.1f", row.megabytesPerSecond)) | \(rss) | \(ratio) | \(referenceRatio) | \(row.note) |"
            )
        }
        if shown.contains(where: { $0.reference != nil }) {
            lines += [
                "",
                "this ÷ ref: the row's MB/s ÷ the MB/s of its workload's reference row (named in the reference row's note), measured in the same run; above 1× is faster than the reference.",
            ]
        }
        return lines
    }

    /// The rows as JSON for `Benchmarks/chart.py`: workload, tool, median MB/s, peak RSS.
    func chartJSON() throws -> Data {
        let entries: [[String: Any]] = rows.map {
            [
                "workload": $0.workload, "tool": $0.tool, "mbps": $0.megabytesPerSecond,
                "rss_mib": $0.peakRSSKiB.map { Double($0) / 1024 } ?? 0,
            ]
        }
        return try JSONSerialization.data(withJSONObject: entries, options: [.prettyPrinted, .sortedKeys])
    }
}

/// How a target's ratio went round by round: within a round the cases run one after another,
/// so a round's pair saw the machine alike, and on a shared machine one run's median can land
/// either side of a target. Each round's ratio is `numerator`'s seconds ÷ `denominator`'s; the
/// text gives their range and in how many rounds `meets` held, e.g. " (rounds: 0.84–1.05×, met
/// in 2 of 5)", or "" with fewer than two rounds measured by both.
func roundRatios(_ numerator: ResultRow, _ denominator: ResultRow, meets: (Double) -> Bool) -> String {
    let ratios = zip(numerator.seconds, denominator.seconds).filter { $0.0 > 0 && $0.1 > 0 }.map { $0.0 / $0.1 }
    guard ratios.count > 1, let low = ratios.min(), let high = ratios.max() else { return "" }
    // The median of the rounds' own ratios: each pair ran in the same minute, so a machine that
    // speeds up or slows down over the run moves it less than the ratio of the two medians.
    let sorted = ratios.sorted()
    let middle = sorted.count / 2
    let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    return String(
        format: " (rounds: median %.2f×, %.2f–%.2f×, met in %d of %d)", median, low, high, ratios.filter(meets).count, ratios.count)
}
