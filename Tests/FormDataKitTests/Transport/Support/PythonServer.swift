import Foundation
import FormDataKitTestSupport
import FormDataKitTesting

/// A Python server from this folder (form_server.py, edge_server.py), started on loopback: it
/// prints `PORT <n> [<n> …]` as its first line and serves until its standard input closes.
final class PythonServer: Sendable {
    private let process: PortAnnouncingProcess
    /// The ports the script printed, in its order.
    var ports: [Int] { process.ports }

    /// Starts `script` (a file name in this folder); throws when it does not print its ports.
    /// Waits for the script's start off the Swift concurrency pool (see ``PortAnnouncingProcess``).
    init(script: String) async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(script).path
        process = try await PortAnnouncingProcess(arguments: ["python3", path]) { text in
            TransportTestSupport.Failure(description: "\(script) did not start: \(text)")
        }
    }

    /// Closes the server's standard input and waits for it to exit.
    func stop() { process.stop() }
}
