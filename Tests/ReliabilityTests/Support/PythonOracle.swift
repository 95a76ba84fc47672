#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport

/// One long-lived Python process (Support/form_oracle.py) parsing bodies with Werkzeug and with
/// the stdlib `email` package. Requests are written and answers read one at a time on threads of
/// their own, never on the Swift concurrency pool.
final class PythonOracle: @unchecked Sendable {
    // `@unchecked`: `buffer`, the process and the pipes are touched only under `serial`.
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
            if container.decodeNil() {
                self = .null
            } else if let n = try? container.decode(Int.self) {
                self = .number(n)
            } else {
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

    /// Held by the one parse in flight (on its own thread).
    private let serial = NSLock()
    private var process: SpawnedProcess?
    private var input: FileHandle?
    private var outputFD: Int32 = -1
    private var buffer = Data()

    private func startIfNeeded() throws {
        if let process, process.isRunning { return }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("form_oracle.py")
        let process = try SpawnedProcess("/usr/bin/env", ["python3", script.path], stdin: .pipe, stdout: .pipe, stderr: .inherit)
        self.process = process
        input = process.standardInput
        outputFD = process.standardOutput!.fileDescriptor
        buffer = Data()
    }

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
            // A thread of its own (not a dispatch queue, whose threads Swift concurrency shares
            // on Linux): the parse blocks on the Python child.
            Thread.detachNewThread {
                self.serial.lock()
                defer { self.serial.unlock() }
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
