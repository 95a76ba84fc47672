#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A finished child process: wall time, peak resident memory, exit status, and CPU time (user +
/// system, including its waited-for descendants: Linux's `wait4` counts them).
struct ChildResult {
    var seconds: Double
    var peakRSSKiB: Int
    var status: Int32
    var cpuSeconds: Double = 0
}

/// Runs `arguments` (argv[0] is looked up on PATH) as a child process and measures its wall time
/// and peak RSS.
///
/// Linux carries a process's RSS high-water mark across `execve`, so a child spawned directly by
/// this (large) process would report at least this process's RSS. When GNU time is installed
/// the child runs under `/usr/bin/time`, a small process whose own children start with a clean
/// high-water mark; otherwise the figure from `wait4(2)` is used and is only an upper bound.
func runMeasured(_ arguments: [String], stdoutPath: String? = nil) -> ChildResult {
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/time") {
        let report = NSTemporaryDirectory() + "formdata-bench-time-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(report) }
        var result = spawnAndWait(["/usr/bin/time", "-f", "%M", "-o", report] + arguments, stdoutPath: stdoutPath)
        if let text = try? String(contentsOfFile: report, encoding: .utf8),
            let kib = text.split(separator: "\n").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
        {
            result.peakRSSKiB = kib
        }
        return result
    }
    return spawnAndWait(arguments, stdoutPath: stdoutPath)
}

/// Spawns `arguments` and waits for it with `wait4(2)`.
private func spawnAndWait(_ arguments: [String], stdoutPath: String?) -> ChildResult {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let stdoutPath {
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    }
    var cArgs = arguments.map { strdup($0) } + [nil]
    defer { for pointer in cArgs { free(pointer) } }
    var pid: pid_t = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, &cArgs, environ)
    guard spawned == 0 else { return ChildResult(seconds: 0, peakRSSKiB: 0, status: -1) }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    return ChildResult(seconds: seconds, peakRSSKiB: Int(usage.ru_maxrss), status: exitCode, cpuSeconds: cpu)
}

/// This executable's path, for re-running itself as a measured child.
var selfPath: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// Another build's `formdata-bench` (`--compare-with`): W5's and W7's FormDataKit curl rows and
/// W8's queue row get a twin that runs its child, in the same run as this build's; nil for none.
nonisolated(unsafe) var comparedBuild: String?

/// The tool name of `tool`'s twin row for ``comparedBuild``.
func comparedTool(_ tool: String) -> String { "\(tool), compared build" }

/// `formdata-bench-child`, built beside this executable (a dependency of this target): the
/// FormDataKit side of the building workloads (W1–W4, W6) runs in it, so its peak RSS is not
/// inflated by the SwiftNIO and AsyncHTTPClient code this driver links; the sending workloads'
/// children (W5, concurrent, W7, W8, resume) run in this executable (``selfPath``).
var childPath: String {
    URL(fileURLWithPath: selfPath).deletingLastPathComponent().appendingPathComponent("formdata-bench-child").path
}

/// `Benchmarks/peers/py_peers.py`, the Python peers (found from this source file's location).
var pythonPeersScript: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Benchmarks/peers/py_peers.py").standardized.path
}

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// Whether `tool` is on PATH.
func toolExists(_ tool: String) -> Bool {
    runMeasured(["sh", "-c", "command -v \(tool) >/dev/null 2>&1"]).status == 0
}
