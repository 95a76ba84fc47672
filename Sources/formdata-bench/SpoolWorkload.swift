import FormDataKit
import Foundation

/// W3: three files plus ten fields as multipart, spooled to a temporary file — against `cat`
/// of the same files (the floor for writing the same bytes once).
enum SpoolWorkload {
    static let name = "W3 spool"

    /// Builds the form in a child process (so its peak RSS is measured alone) and `cat`s the same
    /// files, alternating runs. Dirty pages are flushed (`sync`, not timed) before every run, so
    /// the write-back of one run's output (or of the generated inputs) is not charged to the next.
    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let total = totalMiB << 20
        let sizes = [total / 2, total / 3, total - total / 2 - total / 3]
        let files = try sizes.enumerated().map { index, size in
            try directory.generate("w3-\(index).\(index == 2 ? "txt" : "bin")", size: size, seed: UInt64(index + 3), text: index == 2)
        }
        var ours = ResultRow(workload: "\(name) \(totalMiB) MiB", tool: "FormDataKit buildPostBody", bytes: total, seconds: [], peakRSSKiB: 0)
        var cat = ResultRow(workload: ours.workload, tool: "cat files > f", bytes: total, seconds: [], peakRSSKiB: 0)
        let out = "\(directory.path)/cat-out"
        for _ in 0..<runs {
            sync()
            let child = runMeasured([childPath, "spool"] + files)
            guard child.status == 0 else { throw BenchError.childFailed("spool child exited \(child.status)") }
            ours.seconds.append(child.seconds)
            ours.peakRSSKiB = max(ours.peakRSSKiB ?? 0, child.peakRSSKiB)
            sync()
            let peer = runMeasured(["sh", "-c", "cat \"$@\" > '\(out)' && rm -f '\(out)'", "sh"] + files)
            cat.seconds.append(peer.seconds)
            cat.peakRSSKiB = max(cat.peakRSSKiB ?? 0, peer.peakRSSKiB)
        }
        ours.note = "whole process incl. start-up and temp-file removal"
        cat.note = "incl. rm of the output"
        return [ours, cat]
    }
}

enum BenchError: Error, CustomStringConvertible {
    case childFailed(String)
    case usage(String)

    var description: String {
        switch self {
        case .childFailed(let message): return message
        case .usage(let message): return message
        }
    }
}
