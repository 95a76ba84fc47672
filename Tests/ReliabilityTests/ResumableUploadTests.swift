import FormDataKit
import FormDataKitTestSupport
import Foundation
import Testing

/// Resumable uploads end to end: Apple's `HTTPResumableUploadHandler` (swift-nio-extras, the
/// ResumableUploadServer test executable) behind a relay that cuts the connection where the
/// test says; the upload runs in the reliability helper (its own process, its peak RSS).
extension Reliability {
    @Suite("Resumable uploads")
    struct ResumableUploadTests {
        /// The largest upload buffer a curl send uses (CurlTransport's default `uploadBufferSize`).
        static let uploadBuffer = 512 << 10
        /// What the server may hold unread when a connection is cut, and drop: its receive buffer
        /// (256 KiB asked, doubled by Linux) and what its HTTP decoder holds.
        static let serverUnread = 1 << 20
        /// What may be in flight between the client and the relay at a cut, lost and sent again:
        /// the relay's receive buffer (256 KiB, doubled), the client's upload buffer and what
        /// waits unsent in its socket. CurlTransport keeps that below 128 KiB on a resumable
        /// upload (`TCP_NOTSENT_LOWAT`); AsyncHTTPClient's socket may hold up to `tcp_wmem`'s
        /// maximum, and its chunk (1 MiB) counts as sent once handed over.
        static func clientInFlight(_ transport: String) -> Int {
            guard transport.hasPrefix("curl") else {
                let wmem =
                    (try? String(contentsOfFile: "/proc/sys/net/ipv4/tcp_wmem", encoding: .utf8))?
                    .split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } ?? 4 << 20
                return wmem + (512 << 10) + (1 << 20)
            }
            return (512 << 10) + uploadBuffer + (128 << 10)
        }
        /// The request-head bytes allowed per connection in the relay's count.
        static let headAllowance = 4 << 10

        /// The uploads cut three times: each form over CurlTransport (the `104` gives the upload's
        /// URL) and, with the AsyncHTTPClient trait, over AsyncHTTPClientTransport (the upload is
        /// created first). A gzip body is 100 MiB of file compressed (the offsets are into the
        /// compressed bytes).
        static var cutCases: [(format: String, gzip: Bool, transport: String)] {
            var cases = [
                ("multipart", false, "curl"), ("urlencoded", false, "curl"), ("raw", false, "curl"), ("multipart", true, "curl"),
                // Over h2 (h2c by prior knowledge, the server with --h2c): the 104 is an
                // interim HEADERS frame, the HEAD and the PATCH are streams of new connections.
                ("multipart", false, "curl-h2c"),
            ]
            #if AsyncHTTPClient
            cases += [("multipart", false, "asynchttpclient"), ("multipart", true, "asynchttpclient")]
            #endif
            return cases
        }

        @Test(
            "a form cut at three random points arrives byte-exact, resumed from the server's offset",
            .enabled(if: ResumableRun.serverBuilt, ResumableRun.withoutTrait),
            arguments: cutCases)
        func cutThreeTimes(format: String, gzip: Bool, transport: String) async throws {
            let long = ProcessInfo.processInfo.environment["FORMDATAKIT_LONG"] == "1"
            // A URL-encoded value lives in memory (encoded, about twice its size): 4 MiB of it.
            let sizeKiB =
                format == "urlencoded" ? 4 << 10 : gzip ? 100 << 10 : (format == "multipart" && long ? 1 << 20 : 32 << 10)
            var generator = SystemRandomNumberGenerator()
            // Cumulative client bytes (heads included): each cut between an eighth and a quarter of
            // the body after the one before, so all three fall inside the body.
            let bytes = sizeKiB * 1024
            var cuts: [Int] = []
            for _ in 0..<3 { cuts.append((cuts.last ?? 0) + Int.random(in: (bytes / 8)...(bytes / 4), using: &generator)) }
            let run = try await ResumableRun.start(cuts: cuts, h2c: transport == "curl-h2c")
            let output = try await Subprocess.run([
                Subprocess.helperPath, "resume", format, String(sizeKiB), gzip ? "1" : "0", run.url("/upload").absoluteString, "5",
                transport,
            ])
            let relay = await run.stop()
            let report = output.report
            let context =
                "\(transport) \(format) gzip \(gzip) cuts \(cuts): \(report) relay \(relay) \(String(decoding: output.stderr, as: UTF8.self))"
            #expect(report["status"] as? Int == 201, "\(context)")
            let answer = (try? JSONSerialization.jsonObject(with: Data((report["answer"] as? String ?? "").utf8))) as? [String: String]
            let expected = report["expectedSHA256"] as? String ?? "?"
            #expect(!expected.isEmpty && answer?["sha256"] == expected, "\(context)")
            let postLength = report["postLength"] as? Int ?? -1
            #expect(Int(answer?["bytes"] ?? "") == postLength, "\(context)")
            #expect(report["resumeCount"] as? Int == 3, "\(context)")
            #expect(relay["cutsDone"] as? Int == 3, "\(context)")
            #expect((report["resumptionURL"] as? String ?? "").contains("/resumable_upload/"), "\(context)")
            #expect(report["progress"] as? Int == postLength, "\(context)")
            #expect(report["httpVersion"] as? String == (transport == "curl-h2c" ? "HTTP/2" : "HTTP/1.1"), "\(context)")
            // Nothing the server had is sent again: the server receives the body once, plus at
            // most what it held unread at each cut (a restart from zero would add whole megabytes).
            let sent = relay["clientBytes"] as? Int ?? .max
            let connections = relay["connections"] as? Int ?? 0
            #expect(sent <= postLength + 3 * Self.serverUnread + connections * Self.headAllowance, "\(context)")
            // The client sends again at most what was in flight at each cut (socket buffers
            // included) and what the server dropped.
            let clientSent = report["clientSent"] as? Int ?? .max
            #expect(clientSent <= postLength + 3 * (Self.clientInFlight(transport) + Self.serverUnread), "\(context)")
            let peak = report["peakRSSKiB"] as? Int ?? -1
            // Bounded by the upload buffers, not by the body (a 32 MiB, 100 MiB or 1 GiB file
            // part): within W5's bounds for a 1 GiB send (48 MiB over curl, 64 MiB over
            // AsyncHTTPClient); a URL-encoded body is in memory (4 MiB, encoded twice as large).
            let bound = format == "urlencoded" ? 96 << 10 : transport.hasPrefix("curl") ? 48 << 10 : 64 << 10
            #expect(peak > 0 && peak < bound, "peak RSS \(peak) KiB, bound \(bound) KiB; \(context)")
            print(
                "resumed \(format)\(gzip ? " gzip" : "") over \(transport): \(postLength) bytes, cuts \(cuts), server received \(sent) bytes "
                    + "(heads included) on \(connections) connections, the client sent \(clientSent) body bytes in all, "
                    + "peak RSS \(peak / 1024) MiB")
        }

        /// The transports of this build that resume uploads.
        static var transports: [String] {
            #if AsyncHTTPClient
            return ["curl", "asynchttpclient"]
            #else
            return ["curl"]
            #endif
        }

        @Test(
            "a server without resumable uploads: the same cut fails the send as an ordinary connection failure",
            arguments: transports)
        func withoutServerSupport(transport: String) async throws {
            // The fault server's plain upload route never answers 104, and its OPTIONS answer (501)
            // has no Upload-Limit: over AsyncHTTPClient the upload goes as an ordinary request.
            let server = try await FaultServer.start()
            let run = try await ResumableRun.start(cuts: [200_000], upstreamPort: server.port, afterAnswer: false)
            let output = try await Subprocess.run([
                Subprocess.helperPath, "resume", "raw", "1024", "0", run.url("/upload/plain").absoluteString, "5", transport,
            ])
            _ = await run.stop()
            await server.stop()
            let report = output.report
            #expect(report["asiCode"] as? Int == 1, "\(report)")
            #expect(report["resumeCount"] as? Int == 0 && report["resumptionURL"] as? String == "", "\(report)")
        }

        @Test("the cutting relay lets nothing a server sends after a cut through to the client")
        func relayDropsAnswersAfterACut() async throws {
            // The tests here read a cut as a dropped network, where the server's answer to the
            // bytes it got is lost too; before the relay kept the two apart, that answer now and
            // then reached the client, which took the cut upload for a complete one.
            // cutting_relay_check.py answers each request the moment its last forwarded byte
            // arrives, 40 times (the relay before that fix let 1-11 of 40 through).
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Support/cutting_relay_check.py").path
            let output = try await Subprocess.run(["python3", "-B", script, "40"])
            #expect(
                output.status == 0,
                "\(String(decoding: output.stdout, as: UTF8.self))\(String(decoding: output.stderr, as: UTF8.self))")
        }

        @Test(
            "a cut the moment the server's 104 reaches the client: the upload is still resumed, every time",
            .enabled(if: ResumableRun.serverBuilt, ResumableRun.withoutTrait))
        func cutAsThe104Arrives() async throws {
            // The relay resets the client's connection on the first bytes it reads once the 104
            // has reached the client's kernel: the 104 and the reset arrive together while libcurl
            // is sending, and now and then its send fails before it reads the 104 (the curl
            // transport then takes the 104 from what was left unread at the close: UnreadAtClose).
            // Before that, 3 of 48 and 4 of 120 such uploads failed here (libcurl 55, no URL) with
            // three busy loops beside; the CI run that found it failed one of its cut uploads so.
            var failures: [String] = []
            for attempt in 0..<12 {
                let run = try await ResumableRun.start(cuts: [1])
                let output = try await Subprocess.run([
                    Subprocess.helperPath, "resume", "raw", "4096", "0", run.url("/upload").absoluteString, "1",
                ])
                let relay = await run.stop()
                let report = output.report
                if report["status"] as? Int != 201 || report["resumeCount"] as? Int != 1 || relay["cutsDone"] as? Int != 1 {
                    failures.append("attempt \(attempt): \(report) relay \(relay)")
                }
            }
            #expect(failures.isEmpty, "\(failures.count) of 12 not resumed:\n\(failures.joined(separator: "\n"))")
        }

        @Test(
            "a second loss past numberOfTimesToResumeUpload fails with a typed error naming the setting",
            .enabled(if: ResumableRun.serverBuilt, ResumableRun.withoutTrait))
        func limitReached() async throws {
            let run = try await ResumableRun.start(cuts: [2_000_000, 4_000_000])
            let output = try await Subprocess.run([
                Subprocess.helperPath, "resume", "raw", "8192", "0", run.url("/upload").absoluteString, "1",
            ])
            _ = await run.stop()
            let report = output.report
            #expect(report["asiCode"] as? Int == 1, "\(report)")
            #expect((report["error"] as? String ?? "").contains("numberOfTimesToResumeUpload (1)"), "\(report)")
            #expect(report["resumeCount"] as? Int == 1, "\(report)")
        }
    }
}

/// The resumable-upload server and the cutting relay in front of it (or in front of another
/// server at `upstreamPort`).
struct ResumableRun {
    let server: PortAnnouncingProcess?
    let relay: PortAnnouncingProcess
    let statsFile: String
    let directory: String

    /// `afterAnswer`: a cut waits until the server answered on the connection (its 104 reached the
    /// client), so that the upload is resumable when it is cut.
    /// `h2c`: the server speaks h2 over cleartext by prior knowledge (`--h2c`); the relay forwards
    /// bytes either way, and its `answered` then is the server's first frame (its SETTINGS): h2's
    /// flow control keeps the body behind the server's answers to it (the 104 comes first), so a
    /// cut still falls after the 104 reached the client.
    static func start(cuts: [Int], upstreamPort: Int? = nil, afterAnswer: Bool = true, h2c: Bool = false) async throws -> ResumableRun {
        let directory = NSTemporaryDirectory() + "resumable-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var server: PortAnnouncingProcess?
        var port = upstreamPort ?? 0
        if upstreamPort == nil {
            let started = try await PortAnnouncingProcess(executable: serverPath, arguments: (h2c ? ["--h2c"] : []) + [directory]) { line in
                PythonOracle.Failure(description: "ResumableUploadServer did not start: \(line)")
            }
            server = started
            port = started.ports[0]
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/cutting_relay.py")
        let statsFile = directory + "/relay.json"
        let relay = try await PortAnnouncingProcess(
            arguments: [
                "python3", script.path, String(port), statsFile, cuts.map(String.init).joined(separator: ","),
                afterAnswer ? "answered" : "-",
            ]
        ) { line in PythonOracle.Failure(description: "cutting_relay.py did not start: \(line)") }
        return ResumableRun(server: server, relay: relay, statsFile: statsFile, directory: directory)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(relay.ports[0])\(path)")! }

    /// Stops both; returns the relay's counts.
    func stop() async -> [String: Any] {
        await relay.stopAndWait()
        await server?.stopAndWait()
        let stats = FileManager.default.contents(atPath: statsFile).flatMap { try? JSONSerialization.jsonObject(with: $0) }
        try? FileManager.default.removeItem(atPath: directory)
        return stats as? [String: Any] ?? [:]
    }

    /// Whether this build has the ResumableUploadServer trait: without it the server executable
    /// only says so (swift-nio-extras is not resolved) and the tests that need it are skipped.
    #if ResumableUploadServer
    static let serverBuilt = true
    #else
    static let serverBuilt = false
    #endif
    static let withoutTrait: Comment =
        "needs Apple's resumable-upload server, built with the ResumableUploadServer trait: swift test --traits ResumableUploadServer"

    /// The ResumableUploadServer executable built beside the test binary.
    static var serverPath: String {
        URL(fileURLWithPath: Subprocess.helperPath).deletingLastPathComponent().appendingPathComponent("ResumableUploadServer").path
    }
}
