import Foundation

/// One measured row of the benchmark table.
struct ResultRow {
    var workload: String
    var tool: String
    var bytes: Int
    var seconds: [Double]
    var peakRSSKiB: Int?
    var note: String = ""

    var medianSeconds: Double { median(seconds) }
    var megabytesPerSecond: Double { medianSeconds > 0 ? Double(bytes) / 1e6 / medianSeconds : 0 }
}

/// Collects rows and writes them as a Markdown table, with each peer's ratio to FormDataKit.
struct Report {
    var title: String
    var rows: [ResultRow] = []

    func markdown() -> String {
        var lines = ["## \(title)", "",
                     "| workload | tool | bytes | median s (runs) | MB/s | peak RSS MiB | FormDataKit ÷ this | note |",
                     "|---|---|---:|---:|---:|---:|---:|---|"]
        for row in rows {
            let ours = rows.first { $0.workload == row.workload && $0.tool.hasPrefix("FormDataKit") }
            let ratio = ours.map { row.megabytesPerSecond > 0 ? String(format: "%.2f×", $0.megabytesPerSecond / row.megabytesPerSecond) : "–" } ?? "–"
            let rss = row.peakRSSKiB.map { String(format: "%.1f", Double($0) / 1024) } ?? "–"
            lines.append("| \(row.workload) | \(row.tool) | \(row.bytes) | \(String(format: "%.3f", row.medianSeconds)) (\(row.seconds.count)) | \(String(format: "%.1f", row.megabytesPerSecond)) | \(rss) | \(ratio) | \(row.note) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The rows as JSON for `Benchmarks/chart.py`: workload, tool, median MB/s, peak RSS.
    func chartJSON() throws -> Data {
        let entries: [[String: Any]] = rows.map {
            ["workload": $0.workload, "tool": $0.tool, "mbps": $0.megabytesPerSecond,
             "rss_mib": $0.peakRSSKiB.map { Double($0) / 1024 } ?? 0]
        }
        return try JSONSerialization.data(withJSONObject: entries, options: [.prettyPrinted, .sortedKeys])
    }
}
