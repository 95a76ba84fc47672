import Foundation

/// vapor/multipart-kit 4.7.1's `MultipartSerializer` as a peer for W2 (10,000 fields, multipart,
/// in-process median of many builds) and W3 (three files + ten fields written to a file, whole
/// process), each paired with FormDataKit on the same input in alternating runs.
///
/// The peer is a separate SwiftPM package (Benchmarks/peers/multipart-kit-peer) so FormDataKit
/// and its CI never build SwiftNIO; this workload runs only when its release binary has been
/// built (`swift build -c release --package-path Benchmarks/peers/multipart-kit-peer`) and
/// otherwise reports a skipped row.
enum MultipartKitWorkload {
    static var peerPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Benchmarks/peers/multipart-kit-peer/.build/release/multipart-kit-peer")
            .standardized.path
    }

    static func run(quick: Bool, w3MiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let peer = peerPath
        guard FileManager.default.isExecutableFile(atPath: peer) else {
            return [
                ResultRow(
                    workload: "W2/W3 multipart-kit", tool: "vapor/multipart-kit 4.7.1", bytes: 0, seconds: [],
                    note: "skipped: peer not built (swift build -c release --package-path Benchmarks/peers/multipart-kit-peer)")
            ]
        }
        var rows: [ResultRow] = []

        // W2: in-process build time, as in FieldsWorkload.
        let count = quick ? 1_000 : FieldsWorkload.fieldCount
        let iterations = quick ? 5 : 30
        let fieldsPath = "\(directory.path)/fields-mpkit.json"
        try JSONSerialization.data(withJSONObject: FieldsWorkload.makeFields(count: count)).write(to: URL(fileURLWithPath: fieldsPath))
        let w2 = "W2 \(count) fields multipart (multipart-kit pair)"
        let note = "in-process median of \(iterations) builds"
        var ours = ResultRow(workload: w2, tool: "FormDataKit FormDataRequest", bytes: 0, seconds: [], note: note)
        var theirs = ResultRow(workload: w2, tool: "vapor/multipart-kit MultipartSerializer", bytes: 0, seconds: [], note: note)
        let out = "\(directory.path)/mpkit-out"
        for _ in 0..<runs {
            try inProcess(&ours, [childPath, "w2", fieldsPath, String(iterations)], out: out)
            try inProcess(&theirs, [peer, "w2", fieldsPath, String(iterations)], out: out)
        }
        rows += [ours, theirs]

        // W3: whole process, the body written to a file (FormDataKit spools it to its temp file).
        let files = try W3Files.generate(totalMiB: w3MiB, in: directory)
        let w3 = "W3 \(w3MiB) MiB to a file (multipart-kit pair)"
        let total = w3MiB << 20
        var spool = ResultRow(
            workload: w3, tool: "FormDataKit buildPostBody (spool)", bytes: total, seconds: [],
            note: "whole process; streams the files")
        var serializer = ResultRow(
            workload: w3, tool: "vapor/multipart-kit MultipartSerializer → file", bytes: total, seconds: [],
            note: "whole process; its API holds the files and the body in memory")
        for _ in 0..<runs {
            wholeProcess(&spool, [childPath, "spool"] + files)
            wholeProcess(&serializer, [peer, "w3", out] + files)
            try? FileManager.default.removeItem(atPath: out)
        }
        rows += [spool, serializer]
        return rows
    }

    /// Runs a child that prints "<median seconds> <bytes>" and records that in-process time.
    private static func inProcess(_ row: inout ResultRow, _ command: [String], out: String) throws {
        let result = runMeasured(command, stdoutPath: out)
        defer { try? FileManager.default.removeItem(atPath: out) }
        guard result.status == 0, let text = try? String(contentsOfFile: out, encoding: .utf8) else {
            throw BenchError.childFailed("\(row.tool) exited \(result.status)")
        }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count >= 2, let seconds = Double(parts[0]), let size = Int(parts[1]) else {
            throw BenchError.childFailed("\(row.tool) printed \(text)")
        }
        row.seconds.append(seconds)
        row.bytes = size
        row.peakRSSKiB = max(row.peakRSSKiB ?? 0, result.peakRSSKiB)
    }

    private static func wholeProcess(_ row: inout ResultRow, _ command: [String]) {
        let result = runMeasured(command, stdoutPath: "/dev/null")
        guard result.status == 0 else {
            row.note = "FAILED (exit \(result.status))"
            return
        }
        row.seconds.append(result.seconds)
        row.peakRSSKiB = max(row.peakRSSKiB ?? 0, result.peakRSSKiB)
    }
}
