import FormDataKit
import Foundation

/// W1 (10,000 small fields, URL-encoded) and W2 (the same fields, multipart): in-process build
/// time per build, median of many builds, each tool in its own child process (for its peak RSS).
enum FieldsWorkload {
    static let fieldCount = 10_000

    /// Deterministic fields: ~20-byte values mixing ASCII, reserved characters and non-ASCII.
    static func makeFields(count: Int) -> [[String]] {
        let pieces = [
            "a", "b", "c", "x", "y", "z", "0", "7", " ", "&", "=", "+", "%", "/", "?", "#", "é", "€", "日", "😀", "-", "_", ".", "~", "\r\n",
            "--",
        ]
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        return (0..<count).map { index in
            var value = ""
            while value.utf8.count < 18 { value += pieces[next(pieces.count)] }
            return ["field\(index)", value]
        }
    }

    static func run(quick: Bool, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let count = quick ? 1_000 : fieldCount
        let fieldsPath = "\(directory.path)/fields.json"
        try JSONSerialization.data(withJSONObject: makeFields(count: count)).write(to: URL(fileURLWithPath: fieldsPath))
        let iterations = quick ? 5 : 30
        let script = pythonPeersScript
        var rows: [ResultRow] = []
        for (workload, label) in [("w1", "W1 \(count) fields url-encoded"), ("w2", "W2 \(count) fields multipart")] {
            var tools: [(String, [String])] = [("FormDataKit FormDataRequest", [childPath, workload, fieldsPath, String(iterations)])]
            let pythonTools = workload == "w1" ? ["urlencode"] : ["urllib3", "toolbelt"]
            for tool in pythonTools {
                tools.append(
                    (
                        "Python \(tool == "urlencode" ? "urllib.parse.urlencode" : tool == "urllib3" ? "urllib3.encode_multipart_formdata" : "requests-toolbelt MultipartEncoder")",
                        ["python3", script, tool, workload, fieldsPath, String(iterations)]
                    ))
            }
            for (name, command) in tools {
                var row = ResultRow(
                    workload: label, tool: name, bytes: 0, seconds: [], peakRSSKiB: 0,
                    note: "in-process median of \(iterations) builds")
                var skipped = false
                for _ in 0..<runs {
                    let out = "\(directory.path)/child-out"
                    let result = runMeasured(command, stdoutPath: out)
                    if result.status == 3 {
                        skipped = true
                        break
                    }
                    guard result.status == 0, let text = try? String(contentsOfFile: out, encoding: .utf8) else {
                        throw BenchError.childFailed("\(name) exited \(result.status)")
                    }
                    let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
                    guard parts.count >= 2, let seconds = Double(parts[0]), let size = Int(parts[1]) else {
                        throw BenchError.childFailed("\(name) printed \(text)")
                    }
                    row.seconds.append(seconds)
                    row.bytes = size
                    row.peakRSSKiB = max(row.peakRSSKiB ?? 0, result.peakRSSKiB)
                }
                if skipped {
                    row.note = "skipped: not installed"
                    row.peakRSSKiB = nil
                }
                rows.append(row)
            }
        }
        return rows
    }
}
