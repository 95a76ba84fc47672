import FormDataKit
import Foundation

/// `resume` (issue 27): what resuming an upload costs. A multipart form — one field and one file
/// part of `--size-mib` MiB (256 by default, 8 with `--quick`) — sent by FormDataKit over
/// ``CurlTransport`` with ``FormDataRequest/shouldResumeInterruptedUploads`` on, to Apple's
/// resumable-upload handler (this package's `ResumableUploadServer` executable, built with the
/// `ResumableUploadServer` trait) through `cutting_relay.py`, the reliability tests' loopback relay:
///
/// - uninterrupted (the reference): the relay forwards everything;
/// - cut 3 times: the relay cuts the connection three times at random points inside the body, each
///   an eighth to a quarter of the body after the one before, once the server has answered its
///   `104` (the relay's `answered` mode); the request resumes from the server's offset each time.
///
/// Both send the same form the same way, so the time ratio is the cost of three resumptions. The
/// two alternate within each run; each send is a child process (`--child resume`, its peak RSS its
/// own) behind a fresh relay, and times its build + send with its own clock — the server answers
/// after hashing the stored upload with `sha256sum`, in both rows — then hashes the body it built.
/// A row fails, in the table and in the run's exit status, unless the server answered 201 with the
/// body's sha256 and length and the request resumed exactly as often as the relay cut. Without the
/// server (not found, or built without the trait: it then exits 2) the workload is skipped.
enum ResumeWorkload {
    /// The reference row's tool: the send the relay does not cut.
    static let uninterruptedTool = "FormDataKit curl, resumable, uninterrupted"
    /// The row of the send cut ``cutCount`` times.
    static let cutTool = "FormDataKit curl, resumable, cut 3 times"
    /// The cuts of the cut row.
    static let cutCount = 3
    /// The request's `numberOfTimesToResumeUpload`: above ``cutCount``, so that a resumption more
    /// than the cuts (a `409`, say) shows as a wrong count rather than as a failed send.
    static let resumeLimit = 5
    /// The prefix of the child's one line of results.
    static let resultPrefix = "formdata-bench-resume "
    /// How to get the server, for the skipped row's note.
    static let buildHint =
        "swift build -c release --traits ResumableUploadServer --product formdata-bench, or pass --resumable-server PATH"

    /// `cutting_relay.py` of the reliability tests, found from this source file's location (as
    /// `Benchmarks/` is): one relay for the tests and the benchmark.
    static var relayScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Tests/ReliabilityTests/Support/cutting_relay.py").standardized.path
    }

    /// The server executable: `option` (`--resumable-server PATH`), else `ResumableUploadServer`
    /// in this executable's build directory.
    static func serverPath(_ option: String?) -> String {
        option ?? URL(fileURLWithPath: selfPath).deletingLastPathComponent().appendingPathComponent("ResumableUploadServer").path
    }

    /// One row and what its sends measured besides time, run by run.
    struct Case {
        /// The row: times (the child's clock), peak RSS, the body length as its bytes, the note.
        var row: ResultRow
        /// Whether the relay cuts this row's sends.
        var cutting: Bool
        /// Set by a failed send: the row's later runs are not made.
        var failed = false
        /// The bytes the server received (the relay's `clientBytes`, request heads included).
        var received: [Int] = []
        /// The connections the relay forwarded.
        var connections: [Int] = []
        /// The cuts, in per cent of the file part.
        var cutPercents: [[Int]] = []
        /// The body's length (`postLength`).
        var bodyLength = 0
        /// What the relay wrote to standard error (such as a slow close of a cut connection).
        var relayNotes: Set<String> = []
    }

    /// What one send measured.
    struct Outcome {
        /// Build + send, by the child's clock.
        var seconds: Double
        /// The child's peak RSS.
        var peakRSSKiB: Int
        /// The body's length (`postLength`).
        var bodyLength: Int
        /// The relay's `clientBytes`: what the server received, request heads included.
        var received: Int
        /// The connections the relay forwarded.
        var connections: Int
        /// What the relay wrote to standard error (usually nothing).
        var relayNote: String
    }

    /// Runs the two rows `runs` times each, alternating, and adds them (or one skipped or failed
    /// row) to `report`; a failed send adds a line to the report's failures.
    static func run(totalMiB: Int, runs: Int, server option: String?, in directory: WorkloadDirectory, into report: inout Report) throws {
        let workload = "resume \(totalMiB) MiB"
        func skip(_ why: String) {
            report.rows.append(
                ResultRow(workload: workload, tool: "FormDataKit curl, resumable", bytes: 0, seconds: [], note: "skipped: \(why)"))
        }
        let server = serverPath(option)
        let needs = "needs \(server) built with --traits ResumableUploadServer (\(buildHint))"
        guard FileManager.default.isExecutableFile(atPath: server) else { return skip("\(needs); it is not there") }
        guard FileManager.default.fileExists(atPath: relayScript) else {
            return skip("needs the reliability tests' relay at \(relayScript) (a source checkout)")
        }
        guard toolExists("python3") else { return skip("python3 is not installed (the cutting relay)") }
        let serverDirectory = "\(directory.path)/resume-server"
        try FileManager.default.createDirectory(atPath: serverDirectory, withIntermediateDirectories: true)
        let serverStderr = "\(directory.path)/resume-server.stderr"
        func fail(_ problem: String) {
            report.rows.append(
                ResultRow(workload: workload, tool: "FormDataKit curl, resumable", bytes: 0, seconds: [], note: "FAILED: \(problem)"))
            report.failures.append("\(workload): \(problem)")
        }
        let started: AnnouncedProcess.Start
        do {
            started = try AnnouncedProcess.start([server, serverDirectory], stderrPath: serverStderr)
        } catch {
            return fail("\(server): \(error)")
        }
        let uploadServer: AnnouncedProcess
        switch started {
        case .running(let process): uploadServer = process
        case .exited(status: 2, stderr: _): return skip("\(needs); it exits 2: built without the trait")
        case .exited(let status, let stderr): return fail("\(server) exited \(status) before announcing its port: \(stderr)")
        }
        defer { uploadServer.stop() }
        let fileBytes = totalMiB << 20
        let file = try directory.generate("resume-\(totalMiB)mib.bin", size: fileBytes, seed: 27, text: false)
        defer { try? FileManager.default.removeItem(atPath: file) }
        var cases = [
            Case(row: ResultRow(workload: workload, tool: uninterruptedTool, bytes: 0, seconds: [], peakRSSKiB: 0), cutting: false),
            Case(
                row: ResultRow(workload: workload, tool: cutTool, bytes: 0, seconds: [], peakRSSKiB: 0, reference: uninterruptedTool),
                cutting: true),
        ]
        for _ in 0..<runs {
            for index in cases.indices where !cases[index].failed {
                var cuts: [Int] = []
                if cases[index].cutting {
                    for _ in 0..<cutCount { cuts.append((cuts.last ?? 0) + Int.random(in: (fileBytes / 8)...(fileBytes / 4))) }
                }
                do {
                    let outcome = try send(
                        cuts: cuts, serverPort: uploadServer.port, file: file, serverDirectory: serverDirectory, in: directory)
                    cases[index].record(outcome, cutPercents: cuts.map { $0 * 100 / fileBytes })
                } catch {
                    let serverSaid = (try? String(contentsOfFile: serverStderr, encoding: .utf8)) ?? ""
                    let problem = "\(error)\(serverSaid.isEmpty ? "" : " — the server's standard error: \(serverSaid)")"
                    cases[index].failed = true
                    cases[index].row.note = "FAILED: \(problem)"
                    report.failures.append("\(workload) · \(cases[index].row.tool): \(problem)")
                }
            }
        }
        annotate(&cases, report: &report)
        report.rows += cases.map(\.row)
    }

    /// One send of the form through a fresh relay cutting at `cuts` (none: uninterrupted); throws
    /// ``BenchError/childFailed(_:)`` saying what was wrong when anything was.
    static func send(cuts: [Int], serverPort: Int, file: String, serverDirectory: String, in directory: WorkloadDirectory) throws
        -> Outcome
    {
        let statsFile = "\(directory.path)/resume-relay.json"
        let relayStderr = "\(directory.path)/resume-relay.stderr"
        try? FileManager.default.removeItem(atPath: statsFile)
        let relay: AnnouncedProcess
        let mode = cuts.isEmpty ? "-" : "answered"
        let relayArguments = ["python3", relayScript, String(serverPort), statsFile, cuts.map(String.init).joined(separator: ","), mode]
        switch try AnnouncedProcess.start(relayArguments, stderrPath: relayStderr) {
        case .running(let process): relay = process
        case .exited(let status, let stderr): throw BenchError.childFailed("cutting_relay.py exited \(status) at its start: \(stderr)")
        }
        let stdoutPath = "\(directory.path)/resume-stdout"
        let url = "http://127.0.0.1:\(relay.port)/upload"
        let child = runMeasured([selfPath, "--child", "resume", url, file, String(resumeLimit)], stdoutPath: stdoutPath)
        let relayStatus = relay.stop()
        let relayNote = ((try? String(contentsOfFile: relayStderr, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let stats =
            FileManager.default.contents(atPath: statsFile).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any]
        let output = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let line = output.split(separator: "\n").first { $0.hasPrefix(resultPrefix) }
        let result = line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.dropFirst(resultPrefix.count).utf8)) } as? [String: Any]
        let answerText = result?["answer"] as? String ?? ""
        let answer = (try? JSONSerialization.jsonObject(with: Data(answerText.utf8))) as? [String: String] ?? [:]
        // The server keeps each upload in a file: removed once its report is read.
        if let stored = answer["file"], stored.hasPrefix(serverDirectory + "/") { try? FileManager.default.removeItem(atPath: stored) }
        let relaySaid = relayNote.isEmpty ? "" : " (the relay: \(relayNote))"
        guard child.status == 0 else {
            throw BenchError.childFailed("the send exited \(child.status) (its error is on stderr above)\(relaySaid)")
        }
        guard let result, let seconds = result["seconds"] as? Double, let bodyLength = result["postLength"] as? Int else {
            throw BenchError.childFailed("the send printed no result: \(output)")
        }
        guard let stats, let received = stats["clientBytes"] as? Int, let cutsDone = stats["cutsDone"] as? Int,
            let connections = stats["connections"] as? Int
        else { throw BenchError.childFailed("cutting_relay.py exited \(relayStatus) without writing its counts\(relaySaid)") }
        let status = result["status"] as? Int ?? 0
        guard status == 201 else { throw BenchError.childFailed("the server answered \(status): \(answerText)\(relaySaid)") }
        let bodySHA256 = result["sha256"] as? String ?? ""
        guard !bodySHA256.isEmpty, answer["sha256"] == bodySHA256 else {
            throw BenchError.childFailed(
                "sha256 mismatch: the server stored \(answer["bytes"] ?? "?") bytes with sha256 \(answer["sha256"] ?? "?"), "
                    + "the body's \(bodyLength) bytes have \(bodySHA256.isEmpty ? "no sha256 (hashing failed)" : bodySHA256)")
        }
        guard answer["bytes"] == String(bodyLength) else {
            throw BenchError.childFailed("the server stored \(answer["bytes"] ?? "?") bytes, the body has \(bodyLength)")
        }
        let resumes = result["resumeCount"] as? Int ?? -1
        guard cutsDone == cuts.count, resumes == cuts.count else {
            throw BenchError.childFailed(
                "the relay cut \(cutsDone) time(s) and the send resumed \(resumes) time(s), want \(cuts.count)\(relaySaid)")
        }
        return Outcome(
            seconds: seconds, peakRSSKiB: child.peakRSSKiB, bodyLength: bodyLength, received: received, connections: connections,
            relayNote: relayNote)
    }

    /// The notes of the rows that did not fail: what the server received against the body, the
    /// cuts; and, when neither failed, the cut row's time against the uninterrupted row's (also a
    /// line under the table).
    static func annotate(_ cases: inout [Case], report: inout Report) {
        for index in cases.indices where !cases[index].failed && !cases[index].row.seconds.isEmpty {
            let item = cases[index]
            let extra = item.received.map { $0 - item.bodyLength }
            var note =
                item.cutting
                ? "relay cut \(cutCount)× at random points in the body (answered mode), the send resumed \(cutCount)× (every run); "
                : "ref; no cut, no resumption; "
            note += "the server's upload = the body (sha256 and length) in every run; "
            note += "the server received the body + \(extra.map(String.init).joined(separator: " / ")) bytes"
            note += String(format: " (max +%.2f %%)", Double(extra.max() ?? 0) * 100 / Double(max(1, item.bodyLength)))
            note += " on \(item.connections.map(String.init).joined(separator: " / ")) connection(s) (relay clientBytes, heads included)"
            if item.cutting {
                note +=
                    "; cuts at " + item.cutPercents.map { $0.map { "\($0)" }.joined(separator: "/") + " %" }.joined(separator: "; ")
                    + " of the file part"
            }
            if !item.relayNotes.isEmpty { note += "; relay: " + item.relayNotes.sorted().joined(separator: " | ") }
            note += "; time: build + send (child's clock; the server's 201 follows its sha256sum of the upload), runs "
            note += item.row.seconds.map { String(format: "%.3f", $0) }.joined(separator: " / ") + " s"
            cases[index].row.note = note
        }
        guard cases.count == 2, cases.allSatisfy({ !$0.failed && !$0.row.seconds.isEmpty }) else { return }
        let uninterrupted = cases[0].row.medianSeconds
        let cut = cases[1].row.medianSeconds
        let ratio = uninterrupted > 0 ? cut / uninterrupted : 0
        cases[1].row.note += String(format: "; time ÷ uninterrupted: %.2f×", ratio)
        report.checks.append(
            String(
                format:
                    "%@: cut %d times ÷ uninterrupted = %.2f× the time (median %.3f s vs %.3f s, %+.3f s per cut; runs %.3f–%.3f s vs %.3f–%.3f s); the server received %d vs %d bytes (median; body %d)",
                cases[0].row.workload, cutCount, ratio, cut, uninterrupted, (cut - uninterrupted) / Double(cutCount),
                cases[1].row.seconds.min() ?? 0, cases[1].row.seconds.max() ?? 0, cases[0].row.seconds.min() ?? 0,
                cases[0].row.seconds.max() ?? 0,
                Int(median(cases[1].received.map(Double.init))), Int(median(cases[0].received.map(Double.init))), cases[0].bodyLength))
    }

    /// The child: `resume URL FILE LIMIT` — the form (a field, FILE as the file part) built and
    /// sent once through ``CurlTransport/shared`` with ``FormDataRequest/shouldResumeInterruptedUploads``
    /// on, resuming at most LIMIT times. Prints `formdata-bench-resume` and a JSON object: seconds
    /// (build + send, its own clock), status, answer, postLength, resumeCount and sha256 (of the
    /// body as built, hashed after the clock stopped). Fails when the send fails.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 3, let url = URL(string: arguments[0]), let limit = Int(arguments[2]) else {
            throw BenchError.usage("resume URL FILE LIMIT")
        }
        let (request, body, elapsed) = try sendResumable(
            url: url, file: arguments[1], limit: limit, timeout: 120, transport: CurlTransport.shared, field: "formdata-bench resume")
        if let error = request.error {
            throw BenchError.childFailed("resume: the send failed after \(request.uploadResumeCount) resumption(s): \(error)")
        }
        let values: [String: Any] = [
            "seconds": elapsed, "status": request.responseStatusCode, "answer": request.responseString ?? "",
            "postLength": Int(request.postLength), "resumeCount": request.uploadResumeCount,
            "sha256": try body.map(sha256) ?? "",
        ]
        let json = try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])
        print(resultPrefix + String(decoding: json, as: UTF8.self))
    }

    /// The resumable form both resumable children send: a field of `field` and `file` as the file
    /// part, built and sent once over `transport` with `shouldResumeInterruptedUploads`, resuming at
    /// most `limit` times, `timeOutSeconds` `timeout`. Returns the request, its body as built (to
    /// hash after the clock stopped) and the seconds the build + send took.
    static func sendResumable(
        url: URL, file: String, limit: Int, timeout: Double, transport: any FormDataTransport, field: String
    ) throws -> (request: FormDataRequest, body: BodySource?, seconds: Double) {
        let request = FormDataRequest(url: url)
        request.transport = transport
        request.shouldResumeInterruptedUploads = true
        request.numberOfTimesToResumeUpload = limit
        request.timeOutSeconds = timeout
        request.addPostValue(field, forKey: "field")
        try request.addFile(file, forKey: "file")
        let start = ContinuousClock.now
        try request.buildPostBody()
        let body = request.bodySource
        request.startSynchronous()
        return (request, body, seconds(ContinuousClock.now - start))
    }

    /// The sha256 of `body` as a transport reads it (segment by segment, files in 1 MiB chunks),
    /// by coreutils' `sha256sum`, as the server hashes what it stored.
    static func sha256(_ body: BodySource) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        try body.forEachChunk(size: 1 << 20) { input.fileHandleForWriting.write(Data($0)) }
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }
}

extension ResumeWorkload.Case {
    /// Adds one send's figures.
    mutating func record(_ outcome: ResumeWorkload.Outcome, cutPercents: [Int]) {
        row.seconds.append(outcome.seconds)
        row.peakRSSKiB = max(row.peakRSSKiB ?? 0, outcome.peakRSSKiB)
        row.bytes = outcome.bodyLength
        bodyLength = outcome.bodyLength
        received.append(outcome.received)
        connections.append(outcome.connections)
        if !cutPercents.isEmpty { self.cutPercents.append(cutPercents) }
        if !outcome.relayNote.isEmpty { relayNotes.insert(outcome.relayNote) }
    }
}
