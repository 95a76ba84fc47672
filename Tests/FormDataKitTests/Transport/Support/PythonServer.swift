import Foundation

/// A Python server from this folder (form_server.py, edge_server.py), started on loopback: it
/// prints `PORT <n> [<n> …]` as its first line and serves until its standard input closes.
final class PythonServer: @unchecked Sendable {
    // `@unchecked`: all properties are set once in init.
    let process: Process
    let input: Pipe
    /// The ports the script printed, in its order.
    let ports: [Int]

    /// Starts `script` (a file name in this folder); throws when it does not print its ports.
    init(script: String) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(script).path
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", path]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        let handle = output.fileHandleForReading
        while !line.contains(0x0A) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let ports = text.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard text.hasPrefix("PORT "), !ports.isEmpty else {
            process.terminate()
            throw TransportTestSupport.Failure(description: "\(script) did not start: \(text)")
        }
        self.ports = ports
    }

    /// Closes the server's standard input and waits for it to exit.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
