import FormDataKit
import Foundation

/// The resumable scenario of `formdata-bench faults`: one form of a field and a `totalMiB` MiB
/// file sent by FormDataKit over curl with `shouldResumeInterruptedUploads` to Apple's
/// resumable-upload handler (the `ResumableUploadServer` executable, built with its trait: see
/// ``ResumeWorkload``) in the lab's server namespace, the client's sending limited to 200 Mbit/s,
/// and the link black-holed (nft dropping every packet both ways, no reset) for 3.5 s — longer
/// than the request's `timeOutSeconds = 3` — three times: when the server has stored a quarter,
/// a half and three quarters of the body (its upload file, read every 10 ms). Each stall is
/// resumed from the server's offset (`numberOfTimesToResumeUpload = 10`: an offset request that
/// stalls too is asked again and counts). A run fails the command unless the server answered
/// `201` with the body's sha256 and length, stored one upload, and all three holes fell inside
/// it. What was sent again is the TCP payload the client put on the link beyond the body (an nft
/// counter in the client namespace ahead of the hole, ``FaultLab/countClientOutput()``: request
/// heads and TCP retransmissions included), held to the bound the reliability tests hold a cut to
/// (``perInterruptionBound``) per hole; the transport's own progress count is in the note too.
/// Without the server the row says skipped.
enum FaultResumeWorkload {
    static let name = "Faults: a resumable upload through three black holes"
    static let holes = 3
    static let holeSeconds = 3.5
    static let timeout = 3
    static let resumeLimit = 10
    static let megabits = 200
    /// What a cut may make the client send again (`ResumableUploadTests`, from the Resumable
    /// uploads article): the network's buffers (the tests' relay, 512 KiB), curl's upload buffer
    /// (512 KiB), the unsent limit (`TCP_NOTSENT_LOWAT`, 128 KiB) and what the server held unread
    /// and dropped (1 MiB).
    static let perInterruptionBound = (512 << 10) + (512 << 10) + (128 << 10) + (1 << 20)

    /// What one run measured.
    struct Outcome {
        var seconds: Double
        var peakRSSKiB: Int
        var bodyLength: Int
        /// The TCP payload the client put on the link (before any hole dropped it) beyond the
        /// body: request heads, TCP retransmissions and the bytes sent again from the offset.
        var resent: Int
        /// The body bytes the transport reported sent over every exchange, beyond the body (a
        /// lower bound: libcurl's progress since its last report is lost when an exchange is stopped).
        var countedResent: Int
        var resumes: Int
        var holePercents: [Int]
    }

    static func run(totalMiB: Int, runs: Int, server option: String?, in directory: WorkloadDirectory, into report: inout Report) throws {
        let workload = String(
            format: "%@: %d MiB at %d Mbit/s, %d holes of %.1f s, timeOutSeconds %d", name, totalMiB, megabits, holes, holeSeconds, timeout)
        let tool = "FormDataKit curl, resumable"
        func skip(_ why: String) {
            report.rows.append(ResultRow(workload: workload, tool: tool, bytes: 0, seconds: [], note: "skipped: \(why)"))
        }
        if let reason = FaultLab.unavailableReason { return skip(reason) }
        let server = ResumeWorkload.serverPath(option)
        let needs = "needs \(server) built with --traits ResumableUploadServer (\(ResumeWorkload.buildHint))"
        guard FileManager.default.isExecutableFile(atPath: server) else { return skip("\(needs); it is not there") }
        let file = try directory.generate("faults-resume-\(totalMiB)mib.bin", size: totalMiB << 20, seed: 27, text: false)
        defer { try? FileManager.default.removeItem(atPath: file) }
        var row = ResultRow(workload: workload, tool: tool, bytes: 0, seconds: [], peakRSSKiB: 0)
        var outcomes: [Outcome] = []
        for run in 1...runs {
            do {
                guard let outcome = try once(server: server, file: file, fileBytes: totalMiB << 20, in: directory) else {
                    return skip("\(needs); it exits 2: built without the trait")
                }
                outcomes.append(outcome)
                row.seconds.append(outcome.seconds)
                row.peakRSSKiB = max(row.peakRSSKiB ?? 0, outcome.peakRSSKiB)
                row.bytes = outcome.bodyLength
            } catch {
                report.failures.append("\(workload), run \(run): \(error)")
                row.note = "FAILED (run \(run)): \(error)"
                report.rows.append(row)
                return
            }
        }
        let bound = holes * perInterruptionBound
        let worst = outcomes.map(\.resent).max() ?? 0
        row.note =
            "runs \(runs): one upload stored, = the body (sha256, length), in every run; resumed "
            + outcomes.map { String($0.resumes) }.joined(separator: " / ") + " times; TCP payload on the link beyond the body "
            + outcomes.map { String($0.resent) }.joined(separator: " / ")
            + " bytes (heads and retransmissions included; bound \(bound): \(holes) × \(perInterruptionBound)); "
            + "the transport's progress count beyond the body " + outcomes.map { String($0.countedResent) }.joined(separator: " / ")
            + "; holes at " + outcomes.map { $0.holePercents.map(String.init).joined(separator: "/") + " %" }.joined(separator: "; ")
            + " of the body stored; " + String(format: "longest send %.1f s", row.seconds.max() ?? 0)
        report.rows.append(row)
        report.checks.append(
            "\(name): \(outcomes.count) of \(runs) runs byte-exact; bytes on the link beyond the body at most \(worst) against \(bound) — "
                + (worst <= bound ? "met" : "NOT met"))
        if worst > bound { report.failures.append("\(workload): \(worst) bytes beyond the body on the link, over the bound \(bound)") }
    }

    /// One run in a fresh lab; nil when the server exits 2 (built without its trait).
    static func once(server: String, file: String, fileBytes: Int, in directory: WorkloadDirectory) throws -> Outcome? {
        let serverDirectory = "\(directory.path)/faults-resume-server"
        try? FileManager.default.removeItem(atPath: serverDirectory)
        try FileManager.default.createDirectory(atPath: serverDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: serverDirectory) }
        let lab = try FaultLab()
        defer { lab.tearDown() }
        let start = try AnnouncedProcess.start(
            lab.command(in: lab.server, [server, serverDirectory, FaultLab.serverAddress]),
            stderrPath: "\(directory.path)/faults-resume-server.stderr")
        let uploadServer: AnnouncedProcess
        switch start {
        case .running(let process): uploadServer = process
        case .exited(status: 2, stderr: _): return nil
        case .exited(let status, let stderr): throw BenchError.childFailed("\(server) exited \(status): \(stderr)")
        }
        defer { uploadServer.stop() }
        try lab.setRate(megabits: megabits)
        try lab.countClientOutput()
        // The holes, on a thread of their own: each when the server's upload file reaches its share.
        let clientDone = Locked(false)
        let holePercents = Locked<[Int]>([])
        let holesOver = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { holesOver.signal() }
            for hole in 1...holes {
                let threshold = fileBytes * hole / (holes + 1)
                var stored = 0
                while !clientDone.current {
                    stored = storedBytes(in: serverDirectory)
                    if stored >= threshold { break }
                    usleep(10_000)
                }
                guard !clientDone.current else { return }
                try? lab.setBlackHole(true)
                holePercents.withLock { $0.append(stored * 100 / fileBytes) }
                Thread.sleep(forTimeInterval: holeSeconds)
                try? lab.setBlackHole(false)
            }
        }
        let stdoutPath = "\(directory.path)/faults-resume-stdout"
        let url = "http://\(FaultLab.serverAddress):\(uploadServer.port)/upload"
        let child = runMeasured(
            lab.command(in: lab.client, [selfPath, "--child", "fault-resume", url, file, String(resumeLimit), String(timeout)]),
            stdoutPath: stdoutPath)
        clientDone.withLock { $0 = true }
        holesOver.wait()
        let output = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let line = output.split(separator: "\n").first { $0.hasPrefix(ResumeWorkload.resultPrefix) }
        let result =
            line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.dropFirst(ResumeWorkload.resultPrefix.count).utf8)) }
            as? [String: Any]
        guard child.status == 0, let result, let seconds = result["seconds"] as? Double, let bodyLength = result["postLength"] as? Int,
            let sent = result["sent"] as? Int
        else { throw BenchError.childFailed("the client exited \(child.status): \(output)") }
        let answerText = result["answer"] as? String ?? ""
        let answer = (try? JSONSerialization.jsonObject(with: Data(answerText.utf8))) as? [String: String] ?? [:]
        let status = result["status"] as? Int ?? 0
        let resumes = result["resumeCount"] as? Int ?? -1
        let holesMade = holePercents.current
        guard status == 201 else {
            throw BenchError.childFailed(
                "status \(status), \(result["error"] as? String ?? ""), \(resumes) resumptions, holes at \(holesMade) %: \(answerText)")
        }
        guard let sha256 = result["sha256"] as? String, !sha256.isEmpty, answer["sha256"] == sha256, answer["bytes"] == String(bodyLength)
        else { throw BenchError.childFailed("not byte-exact: the server stored \(answerText), the body is \(bodyLength) bytes") }
        // One upload stored: every resumption appended to it (a send started again would store a second).
        let uploads = (try? FileManager.default.contentsOfDirectory(atPath: serverDirectory))?.filter { $0.hasPrefix("upload-") }.count
        guard uploads == 1 else { throw BenchError.childFailed("the server stored \(uploads ?? 0) uploads, want 1") }
        guard holesMade.count == holes, resumes >= holes else {
            throw BenchError.childFailed("\(holesMade.count) holes inside the upload and \(resumes) resumptions, want \(holes) of each")
        }
        guard let wire = lab.clientOutput() else { throw BenchError.childFailed("the client's nft counter could not be read") }
        // TCP payload: each packet's IP and TCP headers off (20 + 32 bytes: Linux sends timestamps).
        let payload = wire.bytes - 52 * wire.packets
        return Outcome(
            seconds: seconds, peakRSSKiB: child.peakRSSKiB, bodyLength: bodyLength, resent: payload - bodyLength,
            countedResent: sent - bodyLength, resumes: resumes, holePercents: holesMade)
    }

    /// The size of the upload the server is storing (its newest `upload-N` file), 0 before one.
    static func storedBytes(in directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("upload-") }.compactMap { name in
            (try? FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")[.size] as? Int) ?? nil
        }.max() ?? 0
    }
}
