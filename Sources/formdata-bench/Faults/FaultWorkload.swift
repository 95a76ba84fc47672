import FormDataKit
import Foundation

/// `formdata-bench faults`: uploads on a bad network, between two namespaces of the
/// benchmark's own (``FaultLab``). The queue scenario: forms (an `id` field and a 64 KiB file)
/// through one `NetworkQueue`, 4 at a time, with 5 % of packets dropped both ways, the client's
/// sending limited to 6 Mbit/s, and every packet dropped for 6 s starting 5 s in (`--quick`: 20
/// forms, 4 s starting 0.5 s in, still longer than the timeout); keyed
/// (`shouldSendIdempotencyKey`, `RetryPolicy(maximumRetries: 5)`) and, for comparison, ASI's
/// keyless `numberOfTimesToRetryOnTimeout = 5`; `timeOutSeconds = 3`. The server
/// (``FaultReceiver``) counts what it processed. Needs root, `ip`, `tc` and `nft`; otherwise
/// the workload says why and is skipped.
enum FaultWorkload {
    static let name = "Faults: queue, 5 % loss both ways, 6 Mbit/s, a black hole"
    static let fileBytes = 64 << 10
    static let width = 4
    static let timeout = 3
    static let retries = 5

    /// When the black hole starts and how long it lasts, in seconds; with `every`, it comes back
    /// every `every` seconds (a flapping link) until the client is done.
    struct BlackHole {
        var start: Double
        var length: Double
        var every: Double?
    }

    static func run(uploads: Int, runs: Int, hole: BlackHole, in directory: WorkloadDirectory, into report: inout Report) throws {
        try scenario(
            String(format: "%@ of %.0f s at %.1f s, %d uploads", name, hole.length, hole.start, uploads), checkName: name,
            uploads: uploads, runs: runs, hole: hole, busyFirst: false, in: directory, into: &report)
    }

    /// A queue scenario's runs, keyed (every upload must arrive once) and, without `busyFirst`,
    /// keyless (its duplicates are counted, as documented): a row each, with its totals.
    private static func scenario(
        _ workload: String, checkName: String, uploads: Int, runs: Int, hole: BlackHole, busyFirst: Bool, in directory: WorkloadDirectory,
        into report: inout Report
    ) throws {
        if let reason = FaultLab.unavailableReason {
            report.checks.append("\(checkName): skipped — \(reason)")
            return
        }
        let file = try directory.generate("faults-64kib.bin", size: fileBytes, seed: 58, text: false)
        let retries = busyFirst ? 8 : Self.retries
        for keyed in busyFirst ? [true] : [true, false] {
            let tool =
                keyed
                ? "FormDataKit keyed, RetryPolicy(\(retries)\(busyFirst ? ", honoursRetryAfter" : ""))"
                : "FormDataKit keyless, retry on timeout \(retries)"
            var row = ResultRow(workload: workload, tool: tool, bytes: uploads * fileBytes, seconds: [], peakRSSKiB: nil)
            var totals = (arrived: 0, duplicates: 0, mismatched: 0, succeeded: 0, busy: 0, longest: 0.0, failures: [String: Int]())
            for run in 1...runs {
                let (outcome, stats) = try once(
                    uploads: uploads, keyed: keyed, retries: retries, hole: hole, file: file, in: directory, busyFirst: busyFirst)
                row.seconds.append(outcome.seconds)
                let (arrived, duplicates) = (stats.arrived(of: uploads), stats.duplicates)
                totals.arrived += arrived
                totals.duplicates += duplicates
                totals.mismatched += stats.mismatched
                totals.succeeded += outcome.succeeded
                totals.busy += stats.busyAnswered
                totals.longest = max(totals.longest, outcome.longestSend)
                totals.failures.merge(outcome.failures, uniquingKeysWith: +)
                if stats.mismatched > 0 { report.failures.append("\(tool), run \(run): \(stats.mismatched) bodies differed") }
                if keyed && (arrived < uploads || duplicates > 0) {
                    report.failures.append("\(tool), run \(run): \(arrived) of \(uploads) arrived, \(duplicates) processed twice")
                }
            }
            let failures = totals.failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            row.note =
                "\(runs) runs: arrived \(totals.arrived)/\(uploads * runs), processed twice \(totals.duplicates), "
                + "differing \(totals.mismatched), \(busyFirst ? "answered 503 \(totals.busy), " : "")succeeded \(totals.succeeded)"
                + "\(failures.isEmpty ? "" : " (others: \(failures))"), " + String(format: "longest send %.1f s", totals.longest)
            report.rows.append(row)
            report.checks.append(
                "\(checkName) · \(tool): "
                    + (keyed
                        ? (totals.arrived == uploads * runs && totals.duplicates == 0 ? "every upload arrived once — met" : "NOT met")
                        : "\(totals.duplicates) processed twice (ASI's retry on timeout re-sends without a key, as documented)"))
        }
    }

    /// The response scenario's answers: `answerBytes` each, sent by the server at
    /// `serverMegabits`, written by the client into `directory`.
    struct Responses {
        var answerBytes: Int
        var serverMegabits: Int
        var directory: String
    }

    static let responsesName = "Faults: a black hole during responses"

    /// The response scenario: keyed forms through the queue, each answered with `answerBytes`
    /// written to a file (`downloadDestinationPath`), the server's sending limited to 24 Mbit/s,
    /// every packet dropped for `hole.length` s from `hole.start`, longer than `timeOutSeconds`.
    /// An answer cut by the hole has begun, so it is not sent again: its send must end by its
    /// timeout, typed, its file and temporary file gone; every other form arrives once and its
    /// file is whole.
    static func runResponses(uploads: Int, runs: Int, hole: BlackHole, in directory: WorkloadDirectory, into report: inout Report) throws {
        if let reason = FaultLab.unavailableReason {
            report.checks.append("\(responsesName): skipped — \(reason)")
            return
        }
        let file = try directory.generate("faults-responses-2kib.bin", size: 2048, seed: 59, text: false)
        let answerBytes = 2 << 20
        let tool = "FormDataKit keyed, RetryPolicy(\(retries)), responses to files"
        var row = ResultRow(
            workload: String(
                format: "%@: 2 MiB answers at 24 Mbit/s, a black hole of %.0f s at %.1f s, %d forms", responsesName, hole.length,
                hole.start,
                uploads),
            tool: tool, bytes: uploads * answerBytes, seconds: [], peakRSSKiB: nil)
        var totals = (succeeded: 0, failures: [String: Int](), whole: 0, leftBehind: 0, duplicates: 0, missing: 0, longest: 0.0)
        for run in 1...runs {
            let downloads = "\(directory.path)/faults-downloads"
            try? FileManager.default.removeItem(atPath: downloads)
            try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
            let (outcome, stats) = try once(
                uploads: uploads, keyed: true, hole: hole, file: file, in: directory,
                responses: Responses(answerBytes: answerBytes, serverMegabits: 24, directory: downloads))
            row.seconds.append(outcome.seconds)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []
            let whole = names.filter { name in
                let size = (try? FileManager.default.attributesOfItem(atPath: "\(downloads)/\(name)")[.size] as? Int) ?? nil
                return name.hasSuffix(".bin") && size == answerBytes
            }
            let duplicates = stats.duplicates
            let missing = uploads - stats.arrived(of: uploads)
            totals.succeeded += outcome.succeeded
            totals.failures.merge(outcome.failures, uniquingKeysWith: +)
            totals.whole += whole.count
            totals.leftBehind += names.count - whole.count
            totals.duplicates += duplicates
            totals.missing += missing
            totals.longest = max(totals.longest, outcome.longestSend)
            let untyped = outcome.failures.filter { $0.key != "timedOut" }
            if names.count != whole.count || whole.count != outcome.succeeded || duplicates > 0 || !untyped.isEmpty {
                report.failures.append(
                    "\(responsesName), run \(run): \(outcome.succeeded) succeeded, \(whole.count) whole files, "
                        + "\(names.count - whole.count) other files left, \(duplicates) processed twice, failures \(outcome.failures)")
            }
        }
        let failures = totals.failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        row.note =
            "\(runs) runs: succeeded \(totals.succeeded)/\(uploads * runs)\(failures.isEmpty ? "" : " (others: \(failures))"), "
            + "whole files \(totals.whole), other files left \(totals.leftBehind), processed twice \(totals.duplicates), "
            + "not processed \(totals.missing), " + String(format: "longest send %.1f s", totals.longest)
        report.rows.append(row)
        let met =
            totals.leftBehind == 0 && totals.whole == totals.succeeded && totals.duplicates == 0
            && totals.failures.keys.allSatisfy { $0 == "timedOut" }
        report.checks.append(
            "\(responsesName): every cut answer ended timedOut with nothing left behind, every other file whole — \(met ? "met" : "NOT met")"
        )
    }

    static let flappingName = "Faults: a flapping link, Retry-After"

    /// The flapping scenario: keyed forms (a field and a 64 KiB file) through the queue, 4 at a
    /// time, the client's sending limited to 6 Mbit/s, the link down 2 s of every 4 from 1 s in,
    /// and every form's first arrival answered `503` with `Retry-After: 1` (not processed);
    /// `RetryPolicy(maximumRetries: 8, honoursRetryAfter: true)`, `timeOutSeconds = 3`. Every
    /// form must arrive once, byte-exact.
    static func runFlapping(uploads: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        try scenario(
            "\(flappingName): down 2 s of every 4, the first arrival of each form answered 503, \(uploads) uploads",
            checkName: flappingName, uploads: uploads, runs: runs, hole: BlackHole(start: 1, length: 2, every: 4), busyFirst: true,
            in: directory, into: &report)
    }

    /// One run in a fresh lab: the server, the faults, the client; the client's outcome and the
    /// server's count.
    static func once(
        uploads: Int, keyed: Bool, retries: Int = retries, hole blackHole: BlackHole, file: String, in directory: WorkloadDirectory,
        responses: Responses? = nil, busyFirst: Bool = false
    ) throws -> (FaultQueueClient.Outcome, FaultReceiver.Stats) {
        let lab = try FaultLab()
        defer { lab.tearDown() }
        let statsPath = "\(directory.path)/faults-stats.json"
        try? FileManager.default.removeItem(atPath: statsPath)
        let start = try AnnouncedProcess.start(
            lab.command(in: lab.server, [selfPath, "--child", "fault-receiver", statsPath, file]),
            stderrPath: "\(directory.path)/faults-receiver-stderr")
        guard case .running(let server) = start else { throw BenchError.childFailed("the fault receiver did not start: \(start)") }
        if let responses {
            try lab.setRate(megabits: responses.serverMegabits, onServer: true)
        } else {
            try lab.setLoss(percent: busyFirst ? 0 : 5)
            try lab.setRate(megabits: 6)
        }
        // The black hole's schedule, on a thread of its own; it ends once the client is done (a
        // hole that has begun lasts its length).
        let clientDone = Locked(false)
        let holesOver = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: blackHole.start)
            repeat {
                try? lab.setBlackHole(true)
                Thread.sleep(forTimeInterval: blackHole.length)
                try? lab.setBlackHole(false)
                guard let every = blackHole.every, !clientDone.current else { break }
                Thread.sleep(forTimeInterval: max(0, every - blackHole.length))
            } while !clientDone.current
            holesOver.signal()
        }
        var options: [String] = []
        if let responses { options += ["answer=\(responses.answerBytes)", "downloads=\(responses.directory)"] }
        if busyFirst { options.append("retry-after") }
        let outputPath = "\(directory.path)/faults-client-stdout"
        let url = "http://\(FaultLab.serverAddress):\(server.port)/upload"
        let client = runMeasured(
            lab.command(
                in: lab.client,
                [
                    selfPath, "--child", "fault-queue", url, String(uploads), String(width), file, String(timeout), String(retries),
                    keyed ? "keyed" : "unkeyed",
                ] + options), stdoutPath: outputPath)
        clientDone.withLock { $0 = true }
        holesOver.wait()
        server.stop()
        guard client.status == 0, let data = FileManager.default.contents(atPath: outputPath),
            let outcome = try? JSONDecoder().decode(FaultQueueClient.Outcome.self, from: data)
        else { throw BenchError.childFailed("the fault client failed (status \(client.status))") }
        guard let statsData = FileManager.default.contents(atPath: statsPath) else {
            throw BenchError.childFailed("the fault receiver wrote no stats")
        }
        return (outcome, try JSONDecoder().decode(FaultReceiver.Stats.self, from: statsData))
    }
}
