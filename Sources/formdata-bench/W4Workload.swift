import FormDataKit
import Foundation

/// W4: the W3 body (three files of mixed text and binary plus ten fields, multipart) gzip-compressed
/// through `FormDataRequest.shouldCompressRequestBody` into its temporary file, at level 6 and
/// level 1, on the automatic thread count (parallel on a multi-core machine) and on one thread —
/// against `gzip -N`, Python zlib (`compressobj(N, DEFLATED, 31)`, 1 MiB reads: the one-thread
/// libz ceiling) and `pigz -p 2 -N` (the two-thread ceiling) over the same files, each writing its
/// output to a file. Every tool runs as a measured child process (wall time, peak RSS), the tools
/// alternating within each run so machine noise hits them alike.
enum W4Workload {
    static let pythonScript = """
        import sys, zlib
        c = zlib.compressobj(int(sys.argv[1]), zlib.DEFLATED, 31)
        with open(sys.argv[2], 'wb') as out:
            for name in sys.argv[3:]:
                with open(name, 'rb') as f:
                    while True:
                        b = f.read(1 << 20)
                        if not b:
                            break
                        out.write(c.compress(b))
            out.write(c.flush())
        """

    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let files = try W3Files.generate(totalMiB: totalMiB, in: directory)
        let total = totalMiB << 20
        let out = "\(directory.path)/w4-out.gz"
        let hasPython = toolExists("python3")
        let hasPigz = toolExists("pigz")
        var rows: [ResultRow] = []
        for level in [6, 1] {
            let name = "W4 gzip L\(level) \(totalMiB) MiB + 10 fields"
            var tools: [(row: ResultRow, command: [String])] = [
                (
                    ResultRow(workload: name, tool: "FormDataKit FormDataRequest, automatic threads", bytes: total, seconds: []),
                    [childPath, "w4", String(level), "0"] + files
                ),
                (
                    ResultRow(workload: name, tool: "FormDataKit FormDataRequest, 1 thread", bytes: total, seconds: []),
                    [childPath, "w4", String(level), "1"] + files
                ),
                (
                    ResultRow(workload: name, tool: "gzip -\(level) > file", bytes: total, seconds: []),
                    ["sh", "-c", "cat \"$@\" | gzip -\(level) > '\(out)'; s=$?; rm -f '\(out)'; exit $s", "sh"] + files
                ),
            ]
            if hasPython {
                tools.append(
                    (
                        ResultRow(workload: name, tool: "Python zlib compressobj(\(level), 31), 1 MiB reads", bytes: total, seconds: []),
                        [
                            "sh", "-c", "python3 -c \"$1\" \(level) '\(out)' \"$2\" \"$3\" \"$4\"; s=$?; rm -f '\(out)'; exit $s",
                            "sh", pythonScript,
                        ] + files
                    ))
            }
            if hasPigz {
                tools.append(
                    (
                        ResultRow(workload: name, tool: "pigz -p 2 -\(level) > file", bytes: total, seconds: []),
                        ["sh", "-c", "cat \"$@\" | pigz -p 2 -\(level) > '\(out)'; s=$?; rm -f '\(out)'; exit $s", "sh"] + files
                    ))
            }
            var cpu = [[Double]](repeating: [], count: tools.count)
            for _ in 0..<runs {
                for index in tools.indices { measure(&tools[index].row, cpu: &cpu[index], tools[index].command) }
            }
            rows += tools.map(\.row)
            if !hasPython { rows.append(skipped(name, "Python zlib", "python3 not installed")) }
            if !hasPigz { rows.append(skipped(name, "pigz -p 2", "pigz not installed (apt-get install -y pigz)")) }
        }
        return rows
    }

    private static func skipped(_ workload: String, _ tool: String, _ why: String) -> ResultRow {
        ResultRow(workload: workload, tool: tool, bytes: 0, seconds: [], note: "skipped: \(why)")
    }

    /// Runs `arguments` as a measured child and adds its time and peak RSS to `row`, and its CPU
    /// time to `cpu` (shown in the note: on a shared machine, MB per CPU-second is the steadier
    /// figure for one-thread tools, and wall ÷ CPU shows how well two threads were used).
    static func measure(_ row: inout ResultRow, cpu: inout [Double], _ arguments: [String]) {
        let result = runMeasured(arguments)
        guard result.status == 0 else {
            row.note = "FAILED (exit \(result.status))"
            return
        }
        row.seconds.append(result.seconds)
        row.peakRSSKiB = max(row.peakRSSKiB ?? 0, result.peakRSSKiB)
        cpu.append(result.cpuSeconds)
        row.note = String(format: "cpu %.2f s (median)", median(cpu))
    }
}
