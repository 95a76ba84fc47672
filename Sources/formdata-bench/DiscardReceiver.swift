import FormDataKit
import FormDataKitTesting
import Foundation

/// The benchmark's loopback receiver: counts each request's body and drops it, answering
/// `{"bytes":N}`. It runs on the receiver's HTTP server (``LoopbackHTTPServer``: SwiftNIO's
/// HTTP/1.1 on its own event-loop threads), the one `FormReceiver` and `formdata serve` use, so
/// the benchmark measures senders against the same server users run; there is no HTTP parsing of
/// its own here.
final class DiscardReceiver: Sendable {
    /// What the receiver read since the last ``reset()``.
    struct Stats {
        /// Requests whose body was read completely.
        var requests = 0
        /// The body bytes of the last of them.
        var lastBodyBytes = 0
        /// The smallest body of them (0 when none).
        var minimumBodyBytes = 0
        /// All their body bytes.
        var totalBodyBytes = 0
    }

    let port: Int
    private let server: LoopbackHTTPServer
    private let counters: Locked<Stats>

    init() throws {
        let counters = Locked(Stats())
        var configuration = LoopbackHTTPServer.Configuration()
        configuration.maxConnections = 4096
        configuration.backlog = 1024
        configuration.maxBodyBytes = .max
        // The bench's senders pause between sends; no client here is hostile.
        configuration.headDeadline = 600
        configuration.bodyIdleDeadline = 600
        server = try LoopbackHTTPServer.startBlocking(host: "127.0.0.1", port: 0, configuration: configuration) { _, body in
            var bytes = 0
            while let piece = try body.next() { bytes += piece.count }
            counters.withLock { counters in
                counters.minimumBodyBytes = counters.requests == 0 ? bytes : min(counters.minimumBodyBytes, bytes)
                counters.requests += 1
                counters.lastBodyBytes = bytes
                counters.totalBodyBytes += bytes
            }
            return LoopbackHTTPServer.Response(
                status: 200, headers: [(name: "Content-Type", value: "application/json")], body: Data("{\"bytes\":\(bytes)}".utf8))
        }
        self.counters = counters
        port = Int(server.port)
    }

    /// What was read since the last ``reset()``.
    var stats: Stats { counters.current }

    /// The body bytes of the last request read completely.
    var lastBodyBytes: Int { stats.lastBodyBytes }

    func reset() { counters.withLock { $0 = Stats() } }

    /// `formdata-bench --child receiver`: a receiver on its own, announced as `PORT n` on
    /// standard output, until standard input closes. A `stats` line on standard input is
    /// answered with one line, `{"requests":N,"bytes":N}` (what it read since the last `reset`
    /// line, which is answered `ok`): the fault lab's delay scenario counts arrivals so.
    static func serveUntilInputCloses() throws {
        let receiver = try DiscardReceiver()
        FileHandle.standardOutput.write(Data("PORT \(receiver.port)\n".utf8))
        while let line = readLine() {
            switch line {
            case "stats":
                let stats = receiver.stats
                FileHandle.standardOutput.write(Data("{\"requests\":\(stats.requests),\"bytes\":\(stats.totalBodyBytes)}\n".utf8))
            case "reset":
                receiver.reset()
                FileHandle.standardOutput.write(Data("ok\n".utf8))
            default:
                break
            }
        }
        receiver.stop()
    }

    /// Stops accepting connections and closes the open ones.
    func stop() {
        server.stopBlocking()
    }
}
