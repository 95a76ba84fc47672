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

    func markdown() -> String {
        var lines =
            ["## \(title)", ""] + (machine.isEmpty ? [] : machine.map { "- \($0)" } + [""]) + [
                "| workload | tool | bytes | median s (runs) | MB/s | peak RSS MiB | FormDataKit ÷ this | this ÷ ref | note |",
                "|---|---|---:|---:|---:|---:|---:|---:|---|",
            ]
        for row in rows {
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
        if rows.contains(where: { $0.reference != nil }) {
            lines += [
                "",
                "this ÷ ref: the row's MB/s ÷ the MB/s of its workload's reference row (named in the reference row's note), measured in the same run; above 1× is faster than the reference.",
            ]
        }
        if !checks.isEmpty { lines += [""] + checks.map { "- \($0)" } }
        if !failures.isEmpty { lines += ["", "FAILED:"] + failures.map { "- \($0)" } }
        return lines.joined(separator: "\n") + "\n"
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
