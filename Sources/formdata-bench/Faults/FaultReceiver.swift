import FormDataKit
import FormDataKitTesting
import Foundation

/// `formdata-bench --child fault-receiver STATS FILE`: the fault scenarios' server, run inside
/// the lab's server namespace on every address. Each request whose body arrives whole is parsed
/// (FormDataKitTesting's parser): its `id` field names the upload, its `file` part must equal
/// FILE. A request whose `Idempotency-Key` was already processed is answered from the record and
/// not processed again, as a server that honours the key does; any other request is processed,
/// so a keyless repeat counts as a duplicate. The answer is `ok`, or n bytes when the request
/// says `X-Answer-Bytes: n` (the response scenario); a request saying `X-Busy-First` is answered
/// `503` with `Retry-After: 1`, unprocessed, the first time its key arrives (the flapping scenario). Announces `PORT n`; when standard input closes it
/// writes ``Stats`` as JSON to STATS and exits.
enum FaultReceiver {
    /// What the server processed.
    struct Stats: Codable {
        /// How many times each upload (its `id`) was processed.
        var processed: [String: Int] = [:]
        /// Requests answered from the record of their `Idempotency-Key`.
        var repeatsAnswered = 0
        /// Processed requests whose file part differed from the expected bytes, or that did not parse.
        var mismatched = 0
        /// Body bytes of every request read whole.
        var bodyBytes = 0
        /// First arrivals answered `503` with `Retry-After` (`X-Busy-First`), not processed.
        var busyAnswered = 0

        /// How many of the uploads numbered `0..<uploads` were processed at least once.
        func arrived(of uploads: Int) -> Int { (0..<uploads).filter { (processed[String($0)] ?? 0) > 0 }.count }
        /// Processings beyond the first, over every upload.
        var duplicates: Int { processed.values.reduce(0) { $0 + max(0, $1 - 1) } }
    }

    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2 else { throw BenchError.usage("fault-receiver STATS FILE") }
        let expected = try Data(contentsOf: URL(fileURLWithPath: arguments[1]))
        let stats = Locked(Stats())
        let answered = Locked<Set<String>>([])
        let busy = Locked<Set<String>>([])
        var configuration = LoopbackHTTPServer.Configuration()
        configuration.maxBodyBytes = 1 << 30
        let server = try LoopbackHTTPServer.startBlocking(host: "0.0.0.0", port: 0, configuration: configuration) { request, body in
            var bytes = Data()
            while let piece = try body.next() { bytes.append(piece) }
            let key = request.header(IdempotencyKey.headerName)
            if request.header("X-Busy-First") != nil, let key, busy.withLock({ $0.insert(key).inserted }) {
                stats.withLock { $0.busyAnswered += 1 }
                return LoopbackHTTPServer.Response(status: 503, headers: [(name: "Retry-After", value: "1")], body: Data("busy\n".utf8))
            }
            let repeated = key.map { key in answered.withLock { !$0.insert(key).inserted } } ?? false
            stats.withLock { stats in
                stats.bodyBytes += bytes.count
                if repeated {
                    stats.repeatsAnswered += 1
                    return
                }
                let form = try? FormBodyParser.parse(bytes, contentType: request.header("Content-Type") ?? "")
                guard let form, let id = form.value("id"), form.files.first?.data == expected else {
                    stats.mismatched += 1
                    return
                }
                stats.processed[id, default: 0] += 1
            }
            // `X-Answer-Bytes: n`: an answer of n bytes (the response scenario's); else a short one.
            let size = request.header("X-Answer-Bytes").flatMap { Int($0) } ?? 0
            let answer = size > 0 ? Data(repeating: 0x64, count: size) : Data("ok\n".utf8)
            return LoopbackHTTPServer.Response(status: 200, headers: [(name: "Content-Type", value: "text/plain")], body: answer)
        }
        FileHandle.standardOutput.write(Data("PORT \(server.port)\n".utf8))
        while FileHandle.standardInput.availableData.count > 0 {}
        server.stopBlocking()
        try JSONEncoder().encode(stats.current).write(to: URL(fileURLWithPath: arguments[0]))
    }
}
