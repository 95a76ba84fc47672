#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// W3's copy strategies side by side: the W3 body (ten fields and three files) spooled by the
/// library (`BodySpooler`: space reserved first, then one 256 KiB `pread`/`write` buffer) and by
/// `formdata-bench-child spool-copy` with the strategies the library does not use — `sendfile`,
/// with and without the reservation, and other buffer sizes — with `cat files > f` as the peer.
/// This is the measurement behind `BodySpooler`'s choice; every row is a whole child process and
/// includes the output's removal.
enum SpoolCopyWorkload {
    static let strategies: [(argument: String, label: String)] = [
        ("sendfile", "sendfile"),
        ("sendfile-reserve", "sendfile after reserving"),
        ("buffer-256", "256 KiB buffer, no reservation"),
        ("buffer-64-reserve", "64 KiB buffer after reserving"),
        ("buffer-1024-reserve", "1 MiB buffer after reserving"),
    ]

    static func run(totalMiB: Int, runs: Int, in directory: WorkloadDirectory) throws -> [ResultRow] {
        let total = totalMiB << 20
        let files = try W3Files.generate(totalMiB: totalMiB, in: directory)
        let workload = "W3 copy strategies \(totalMiB) MiB"
        let out = "\(directory.path)/w3-copy-out"
        var tools: [(row: ResultRow, command: [String])] = [
            (
                ResultRow(
                    workload: workload, tool: "FormDataKit buildPostBody (reserve + 256 KiB buffer)", bytes: total,
                    seconds: [], peakRSSKiB: 0, note: "the library's strategy"),
                [childPath, "spool"] + files
            )
        ]
        for (argument, label) in strategies {
            tools.append(
                (
                    ResultRow(
                        workload: workload, tool: label, bytes: total, seconds: [], peakRSSKiB: 0,
                        note: "formdata-bench-child spool-copy \(argument)"),
                    [childPath, "spool-copy", argument] + files
                ))
        }
        tools.append(
            (
                ResultRow(
                    workload: workload, tool: "cat files > f", bytes: total, seconds: [], peakRSSKiB: 0,
                    note: "incl. rm of the output"),
                ["sh", "-c", "cat \"$@\" > '\(out)'; s=$?; rm -f '\(out)'; exit $s", "sh"] + files
            ))
        return try SpoolWorkload.measureAlternating(tools, runs: runs)
    }
}
