#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// What a long-lived `CurlTransport` keeps between sends stays bounded: the cookie jar, the
/// connections kept for reuse, and the jar's file is its owner's alone.
extension Reliability {
    @Suite("Resource bounds")
    struct ResourceBoundsTests {
        @Test("600 responses of 50 new 4 KB cookies each: the jar keeps 180 for the domain (not 30,000) and RSS stays bounded")
        func cookieFloodKeepsTheJarBounded() async throws {
            let server = try await FaultServer.start()
            let output = try await Subprocess.run([Subprocess.helperPath, "cookie-flood", "600", server.url("/cookies").absoluteString])
            await server.stop()
            let report = output.report
            #expect(report["ok"] as? Int == 600, "\(report) \(String(decoding: output.stderr, as: UTF8.self))")
            #expect(report["cookies"] as? Int == 180, "\(report)")
            let peak = report["peakRSSKiB"] as? Int ?? -1
            print("cookie flood (600 × 50 cookies of 4 KB): jar \(report["cookies"] ?? "?") cookies, peak RSS \(peak / 1024) MiB")
            // Without the cap the jar held 30,000 cookies and the process about 160 MiB.
            #expect(peak > 0 && peak < 96 << 10, "peak RSS \(peak) KiB")
        }

        @Test("after 40 concurrent sends, at most maximumIdleConnections stay open, and none once idleConnectionTimeout passed")
        func idleConnectionsAreBoundedAndClosed() async throws {
            let receiver = try await FormReceiver.start()
            defer { Task { await receiver.stop() } }
            let port = receiver.url("/").port ?? 0
            // 8 s, not 2: the count right after the burst must come before the timeout closes the
            // connections, and on a machine whose cores are busy the burst's last answer can reach
            // this task seconds after its transfer ended.
            let transport = CurlTransport(configuration: .init(maximumIdleConnections: 8, idleConnectionTimeout: 8))
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let request = FormDataRequest(url: receiver.url("/upload"))
                        request.transport = transport
                        request.setPostValue("\(index)", forKey: "n")
                        return try await request.start().statusCode
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let afterBurst = Self.openClientSockets(toPort: port)
            #expect(afterBurst > 0 && afterBurst <= 8, "\(afterBurst) connections kept after the burst")
            // The loop closes them within a round (1 s) after the timeout; a minute bounds it (the
            // count is looked at every 200 ms: the test ends as soon as they are closed).
            let deadline = ContinuousClock.now + .seconds(60)
            var open = afterBurst
            while open > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                open = Self.openClientSockets(toPort: port)
            }
            #expect(open == 0, "\(open) connections still open after the idle timeout")
            // The transport still sends afterwards (on new connections).
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = transport
            request.setPostValue("again", forKey: "n")
            #expect(try await request.start().statusCode == 200)
            await transport.shutdown()
        }

        @Test(
            "a server trickling a byte every 0.2 s never trips the 2 s idle timeout, but totalTimeOutSeconds (4 s) ends the send",
            arguments: ["curl", "urlsession"])
        func totalTimeoutEndsATrickle(transportName: String) async throws {
            let server = try await FaultServer.start()
            let request = FormDataRequest(url: server.url("/trickle/100"))
            request.transport = transportName == "curl" ? CurlTransport() : URLSessionTransport()
            request.requestMethod = "GET"
            // Idle 2 s: ten times the trickle's 0.2 s between bytes, so a server a busy machine
            // starves for a second does not trip it (it was 1 s). Total 4 s: the send must end
            // there, long before the 20 s the whole body takes.
            request.timeOutSeconds = 2
            request.totalTimeOutSeconds = 4
            let started = ContinuousClock.now
            var failure: FormDataError?
            do { _ = try await request.start() } catch { failure = error }
            let elapsed = started.duration(to: .now)
            await server.stop()
            guard case .timedOut(let underlying)? = failure else {
                Issue.record("expected timedOut, got \(String(describing: failure)) after \(elapsed)")
                return
            }
            #expect(underlying.message.contains("total timeout of 4.0 s"), "\(underlying.message)")
            #expect(failure?.asiErrorCode == 2)
            // The whole body would take 20 s; the send ended by its own deadline (not by an
            // idle timeout, which the trickle never allows): not before it (a clock never runs
            // fast), and well before the body's end (11 s of slack for a busy machine).
            #expect(elapsed >= .seconds(4), "\(elapsed)")
            #expect(elapsed < .seconds(15), "\(elapsed)")
        }

        @Test("the cookie jar file a transport creates is readable by its owner only (0600)")
        func cookieJarFileIsPrivate() async throws {
            let receiver = try await FormReceiver.start()
            let file = NSTemporaryDirectory() + "fdk-jar-\(UUID().uuidString).txt"
            let transport = CurlTransport(configuration: .init(cookieJarFile: file))
            let request = FormDataRequest(url: receiver.url("/cookie?set=session=secret"))
            request.transport = transport
            request.requestMethod = "GET"
            _ = try await request.start()
            await transport.shutdown()
            await receiver.stop()
            defer { unlink(file) }
            var status = stat()
            #expect(stat(file, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o600, "mode \(String(status.st_mode & 0o777, radix: 8))")
            let saved = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            #expect(saved.contains("session\tsecret"), "\(saved)")
        }

        /// Sockets of this process connected to loopback `port` (the client's side: remote port
        /// `port`), still open (TIME-WAIT entries have no inode).
        static func openClientSockets(toPort port: Int) -> Int {
            // Read to the end: /proc files report size 0 and come in pages.
            let data = FileHandle(forReadingAtPath: "/proc/self/net/tcp")?.readDataToEndOfFile() ?? Data()
            let table = String(decoding: data, as: UTF8.self)
            let wanted = String(format: ":%04X", port)
            return table.split(separator: "\n").dropFirst().filter { line in
                let fields = line.split(separator: " ")
                guard fields.count > 9 else { return false }
                return fields[2].hasSuffix(wanted) && fields[9] != "0"
            }.count
        }
    }
}
