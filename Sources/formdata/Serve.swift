import ArgumentParser
import FormDataKitTesting
import Foundation

/// `formdata serve`: the receiver on its own, printing every request.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the form receiver and print every request: method, headers, fields, files (size, sha256).",
        discussion: """
            Limits (defaults in the Reliability article's bounds table): --max-connections (excess answered 503), \
            --head-timeout and --body-idle-timeout in seconds (slow clients get 408), --max-body \
            (413), --max-inflated (one gzip body inflated, 413) and --max-buffered (what all requests \
            at once hold to inflate and parse, 413), --record-max and --record-total-max for captures. \
            Sizes take K, M or G. \
            Authorization, Cookie and Proxy-Authorization values are printed redacted unless \
            --show-secrets; captures keep them, and are written 0600.
            """)

    @Option(name: .long, help: "Port to listen on (0 picks a free one).")
    var port: UInt16 = 8080

    @Option(name: .long, help: "Address to bind to.")
    var host = "127.0.0.1"

    @Option(
        name: .long,
        help: "Store every request (except /discard) in DIR as a raw HTTP request file (0001-POST.http, …) that `formdata diff` reads.")
    var record: String?

    @Option(name: .customLong("record-max"), help: "Record no request larger than SIZE (default 256M).")
    var recordMax: String?

    @Option(name: .customLong("record-total-max"), help: "Stop recording once the captures take SIZE (default 4G).")
    var recordTotalMax: String?

    @Option(name: .customLong("max-connections"), help: "Connections open at once; more are answered 503 (default 512).")
    var maxConnections: Int?

    @Option(name: .customLong("head-timeout"), help: "Seconds for a whole request head (default 30).")
    var headTimeout: Double?

    @Option(name: .customLong("body-idle-timeout"), help: "Seconds a client may be silent mid-body (default 30).")
    var bodyIdleTimeout: Double?

    @Option(name: .customLong("max-body"), help: "The largest request body; larger is answered 413 (default 16G).")
    var maxBody: String?

    @Option(name: .customLong("max-inflated"), help: "The most one gzip body inflates to; more is answered 413 (default 64M).")
    var maxInflated: String?

    @Option(
        name: .customLong("max-buffered"),
        help: "The most bytes all requests at once hold to inflate and parse bodies; more is answered 413 (default 256M).")
    var maxBuffered: String?

    @Flag(name: .customLong("show-secrets"), help: "Print Authorization, Cookie and Proxy-Authorization values.")
    var showSecrets = false

    /// `n`, `nK`, `nM`, `nG` (powers of 1024) as a byte count.
    static func size(_ text: String, option: String) throws -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text)
        var unit = 1
        if let last = text.last?.uppercased().first, let factor = units[last] {
            digits = digits.dropLast()
            unit = factor
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int(digits), value >= 0,
            !value.multipliedReportingOverflow(by: unit).overflow
        else { throw ValidationError("\(option) takes a size such as 4096, 64K, 256M or 4G, not \(text)") }
        return value * unit
    }

    func limits() throws -> FormReceiver.Limits {
        var limits = FormReceiver.Limits.default
        if let recordMax { limits.maxCaptureBytes = try Self.size(recordMax, option: "--record-max") }
        if let recordTotalMax { limits.maxRecordedBytes = try Self.size(recordTotalMax, option: "--record-total-max") }
        if let maxBody { limits.maxBodyBytes = try Self.size(maxBody, option: "--max-body") }
        if let maxInflated { limits.maxInflatedBytes = try Self.size(maxInflated, option: "--max-inflated") }
        if let maxBuffered { limits.maxBufferedBytes = try Self.size(maxBuffered, option: "--max-buffered") }
        if let maxConnections {
            guard maxConnections > 0 else { throw ValidationError("--max-connections takes a positive number") }
            limits.maxConnections = maxConnections
        }
        for (value, option) in [(headTimeout, "--head-timeout"), (bodyIdleTimeout, "--body-idle-timeout")] {
            if let value, !(value > 0 && value <= 86_400) { throw ValidationError("\(option) takes seconds, 0 to 86400") }
        }
        limits.headDeadline = headTimeout ?? limits.headDeadline
        limits.bodyIdleDeadline = bodyIdleTimeout ?? limits.bodyIdleDeadline
        return limits
    }

    func run() async throws {
        let directory = record.map { URL(fileURLWithPath: $0) }
        let showSecrets = self.showSecrets
        let receiver = try await FormReceiver.start(
            host: host, port: port, limits: try limits(), recordingDirectory: directory,
            onRequest: { request in
                // Everything the client sent is escaped: it cannot drive the operator's terminal.
                var text = (showSecrets ? request : request.redactingSecrets()).terminalSummary
                if let path = request.capturePath { text += "\n  recorded: \(FormReceiver.escapedForTerminal(path))" }
                print(text + "\n")
                fflush(nil)
            },
            log: { line in
                FileHandle.standardError.write(Data("formdata serve: \(FormReceiver.escapedForTerminal(line))\n".utf8))
            })
        print(
            "Listening on \(receiver.baseURL.absoluteString)\(directory.map { ", recording to \($0.path)" } ?? "") — routes: /status/<code>, /delay/<ms>, /discard, /gzip, /auth/<user>/<password>, anything else parses. Ctrl-C stops."
        )
        fflush(nil)
        while !Task.isCancelled {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
        }
    }
}
