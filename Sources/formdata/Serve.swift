import ArgumentParser
import FormDataKitTesting
import Foundation

/// `formdata serve`: the receiver on its own, printing every request.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the form receiver and print every request: method, headers, fields, files (size, sha256).")

    @Option(name: .long, help: "Port to listen on (0 picks a free one).")
    var port: UInt16 = 8080

    @Option(name: .long, help: "Address to bind to.")
    var host = "127.0.0.1"

    @Option(name: .long, help: "Store every request in DIR as a raw HTTP request file (0001-POST.http, …) that `formdata diff` reads.")
    var record: String?

    func run() async throws {
        let directory = record.map { URL(fileURLWithPath: $0) }
        let receiver = try await FormReceiver.start(host: host, port: port, recordingDirectory: directory) { request in
            // Everything the client sent is escaped: it cannot drive the operator's terminal.
            var text = request.terminalSummary
            if let path = request.capturePath { text += "\n  recorded: \(FormReceiver.escapedForTerminal(path))" }
            print(text + "\n")
            fflush(nil)
        }
        print(
            "Listening on \(receiver.baseURL.absoluteString)\(directory.map { ", recording to \($0.path)" } ?? "") — routes: /status/<code>, /delay/<ms>, /discard, /gzip, /auth/<user>/<password>, anything else parses. Ctrl-C stops."
        )
        fflush(nil)
        while !Task.isCancelled {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
        }
    }
}
