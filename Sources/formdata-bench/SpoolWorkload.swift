import FormDataKit
import Foundation

/// W3: three files plus ten fields as multipart, spooled to a temporary file — against `cat`
/// of the same files (the floor for writing the same bytes once) and Python's multipart builders
/// writing the same form to a file: requests-toolbelt's `MultipartEncoder` (streams) and urllib3's
/// `encode_multipart_formdata` (builds the body in memory).
///
/// A second `cat` row writes the body's exact bytes (its multipart framing pieces and the files,
/// in order): there every file lands at the same unaligned offset as in the spooled body. `cat`'s
/// in-kernel copy (`copy_file_range`) is about 1.5× slower to an offset that is not a multiple of
/// the page size, while plain `cat files > f` starts the first, largest file at offset 0; the
/// spooler avoids that cost (see `BodySpooler`), so the row shows what it saves.
enum SpoolWorkload {
    static let name = "W3 spool"

    /// Every tool runs as a measured child process (so its peak RSS is its own), the tools
    /// alternating within each run. Dirty pages are flushed (`sync`, not timed) before every run,
    /// so the write-back of one run's output (or of the generated inputs) is not charged to the next.
    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let total = totalMiB << 20
        let sizes = [total / 2, total / 3, total - total / 2 - total / 3]
        let files = try sizes.enumerated().map { index, size in
            try directory.generate("w3-\(index).\(index == 2 ? "txt" : "bin")", size: size, seed: UInt64(index + 3), text: index == 2)
        }
        let workload = "\(name) \(totalMiB) MiB"
        let out = "\(directory.path)/w3-out"
        let bodyPieces = try framedPieces(files: files, in: directory)
        let writeThenRemove = "s=$?; rm -f '\(out)'; exit $s"
        var tools: [(row: ResultRow, command: [String])] = [
            (
                ResultRow(
                    workload: workload, tool: "FormDataKit buildPostBody", bytes: total, seconds: [], peakRSSKiB: 0,
                    note: "whole process incl. start-up and temp-file removal"),
                [childPath, "spool"] + files
            ),
            (
                ResultRow(
                    workload: workload, tool: "cat files > f", bytes: total, seconds: [], peakRSSKiB: 0,
                    note: "incl. rm of the output"),
                ["sh", "-c", "cat \"$@\" > '\(out)'; \(writeThenRemove)", "sh"] + files
            ),
            (
                ResultRow(
                    workload: workload, tool: "cat framing + files > f (the body's exact bytes)", bytes: total, seconds: [],
                    peakRSSKiB: 0, note: "files at the body's unaligned offsets; incl. rm"),
                ["sh", "-c", "cat \"$@\" > '\(out)'; \(writeThenRemove)", "sh"] + bodyPieces
            ),
        ]
        var skipped: [ResultRow] = []
        for (tool, label, note) in [
            ("toolbelt", "Python requests-toolbelt MultipartEncoder → file", "streams 1 MiB reads"),
            ("urllib3", "Python urllib3.encode_multipart_formdata → file", "reads the files and builds the body in memory"),
        ] {
            let probe = runMeasured(["python3", "-c", "import \(tool == "toolbelt" ? "requests_toolbelt" : "urllib3")"])
            guard probe.status == 0 else {
                skipped.append(ResultRow(workload: workload, tool: label, bytes: 0, seconds: [], note: "skipped: not installed"))
                continue
            }
            tools.append(
                (
                    ResultRow(workload: workload, tool: label, bytes: total, seconds: [], peakRSSKiB: 0, note: note),
                    ["sh", "-c", "python3 \"$0\" \(tool) w3 '\(out)' \"$@\"; \(writeThenRemove)", pythonPeersScript] + files
                ))
        }
        return try measureAlternating(tools, runs: runs) + skipped
    }

    /// Runs every tool once per run, alternating, each after a `sync` (not timed), and returns
    /// the rows with their times and peak RSS.
    static func measureAlternating(_ tools: [(row: ResultRow, command: [String])], runs: Int) throws -> [ResultRow] {
        var rows = tools.map(\.row)
        for _ in 0..<runs {
            for (index, tool) in tools.enumerated() {
                sync()
                let result = runMeasured(tool.command)
                guard result.status == 0 else { throw BenchError.childFailed("\(tool.row.tool) exited \(result.status)") }
                rows[index].seconds.append(result.seconds)
                rows[index].peakRSSKiB = max(rows[index].peakRSSKiB ?? 0, result.peakRSSKiB)
            }
        }
        return rows
    }

    /// The spool child's body as files to concatenate: each in-memory piece of multipart framing
    /// written to a small file, the input files as they are. The form is the child's (same fields,
    /// same files, a boundary of the same length), built without spooling (a streaming transport).
    static func framedPieces(files: [String], in directory: WorkloadDirectory) throws -> [String] {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/upload")!)
        request.transport = CurlTransport.shared
        for index in 0..<10 { request.addPostValue("value \(index) — ünïcödé", forKey: "field\(index)") }
        for (index, file) in files.enumerated() { try request.addFile(file, forKey: "file\(index)") }
        try request.buildPostBody()
        guard let source = request.bodySource else { throw BenchError.childFailed("no body source for the framing") }
        var pieces: [String] = []
        for (index, segment) in source.segments.enumerated() {
            switch segment.content {
            case .bytes(let data):
                let path = "\(directory.path)/w3-framing-\(index)"
                try data.write(to: URL(fileURLWithPath: path))
                pieces.append(path)
            case .file(let range):
                guard range.offset == 0, range.length == range.expectedFileSize else {
                    throw BenchError.childFailed("unexpected file range in the W3 body")
                }
                pieces.append(range.path)
            case .stream:
                throw BenchError.childFailed("unexpected stream in the W3 body")
            }
        }
        return pieces
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
