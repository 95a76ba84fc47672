#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One long-lived Python process (Support/form_oracle.py) parsing bodies with Werkzeug and with
/// the stdlib `email` package. Requests are written and answers read on a private serial queue,
/// never on the Swift concurrency pool.
final class PythonOracle: @unchecked Sendable {
    // `@unchecked`: `buffer` and the pipes are touched only on `queue`.
    /// What one parser reported.
    struct Result: Decodable, Sendable {
        var fields: [[String]]?
        var files: [[Item]]?
        var error: String?
    }

    /// A string or a number in a file row.
    enum Item: Decodable, Equatable, Sendable, CustomStringConvertible {
        case text(String), number(Int), null
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null } else if let n = try? container.decode(Int.self) { self = .number(n) } else {
                self = .text(try container.decode(String.self))
            }
        }
        var description: String {
            switch self {
            case .text(let text): return text.debugDescription
            case .number(let n): return "\(n)"
            case .null: return "null"
            }
        }
    }

    /// Both parsers' answers for one body.
    struct Answer: Decodable, Sendable {
        var werkzeug: Result
        var email: Result
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The oracle every test in this run shares (started on first use).
    static let shared = PythonOracle()

    private let queue = DispatchQueue(label: "ReliabilityTests.PythonOracle")
    private var process: Process?
    private var input: FileHandle?
    private var outputFD: Int32 = -1
    private var buffer = Data()

    private func startIfNeeded() throws {
        if let process, process.isRunning { return }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("form_oracle.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        self.process = process
        input = stdin.fileHandleForWriting
        outputFD = stdout.fileHandleForReading.fileDescriptor
        // Keep the read handle alive with the process.
        readHandle = stdout.fileHandleForReading
        buffer = Data()
    }

    private var readHandle: FileHandle?

    private func readLine() throws -> Data {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                return Data(line)
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(outputFD, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "form_oracle.py exited (is werkzeug installed?)") }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Parses the body in the file at `path` (gzip-compressed when `gzip`) with both parsers.
    func parse(path: String, contentType: String, gzip: Bool) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    try self.startIfNeeded()
                    let request: [String: Any] = ["path": path, "content_type": contentType, "gzip": gzip]
                    var line = try JSONSerialization.data(withJSONObject: request)
                    line.append(0x0A)
                    try self.input?.write(contentsOf: line)
                    let answer = try JSONDecoder().decode(Answer.self, from: try self.readLine())
                    continuation.resume(returning: answer)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
