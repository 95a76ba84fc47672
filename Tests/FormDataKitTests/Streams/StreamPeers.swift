#if canImport(Glibc)
import Glibc
#endif
import Foundation
import FormDataKit
import FormDataKitTestSupport

/// The receivers of the streamed-part tests, started on free loopback ports: werkzeug's server
/// and parser (stream_server.py) and Go's net/http with mime/multipart (stream_server.go).
final class StreamPeer: Sendable {
    enum Kind: String, Sendable { case werkzeug, go }

    let kind: Kind
    private let process: PortAnnouncingProcess
    var port: Int { process.ports[0] }

    init(_ kind: Kind) async throws {
        self.kind = kind
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let arguments =
            kind == .werkzeug
            ? ["python3", folder.appendingPathComponent("stream_server.py").path]
            : ["go", "run", folder.appendingPathComponent("stream_server.go").path]
        process = try await PortAnnouncingProcess(arguments: arguments) { text in
            TransportTestSupport.Failure(description: "the \(kind.rawValue) receiver did not start: \(text)")
        }
    }

    func url(_ path: String = "/upload") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func stop() { process.stop() }

    /// Why the Go receiver cannot run here, or nil.
    static var goMissing: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/go") ? nil : "Go is not installed: install the Debian package golang-go"
    }

    /// Runs `body` with a started receiver of `kind`, stopped after.
    static func with<T: Sendable>(_ kind: Kind, _ body: (StreamPeer) async throws -> T) async throws -> T {
        let peer = try await StreamPeer(kind)
        do {
            let result = try await body(peer)
            await TransportTestSupport.blocking { peer.stop() }
            return result
        } catch {
            await TransportTestSupport.blocking { peer.stop() }
            throw error
        }
    }
}

/// What a receiver answered: the framing it saw and each file part as
/// `[name, filename, content type, size, sha256]`.
struct StreamPeerResult: Decodable {
    var te: [String]?
    var cl: Int?
    /// The Content-Encoding (werkzeug only).
    var ce: String?
    /// python-multipart's reading of the same bytes, `[name, filename, size, sha256]` (werkzeug's
    /// receiver only), or why it could not read them.
    var pythonMultipartFiles: [[String]]?
    var pythonMultipartError: String?
    var files: [[String]]
    var fields: [[String]]

    private enum Keys: String, CodingKey {
        case te, cl, ce, files, fields
        case pythonMultipartFiles = "pm_files"
        case pythonMultipartError = "pm_error"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        // werkzeug: a header string or null; Go: a list.
        if let list = try? container.decode([String].self, forKey: .te) {
            te = list.isEmpty ? nil : list
        } else {
            te = (try container.decodeIfPresent(String.self, forKey: .te)).map { [$0] }
        }
        if let number = try? container.decode(Int.self, forKey: .cl) {
            cl = number < 0 ? nil : number
        } else {
            cl = (try container.decodeIfPresent(String.self, forKey: .cl)).flatMap { Int($0) }
        }
        ce = try? container.decodeIfPresent(String.self, forKey: .ce)
        let rows = try container.decode([[FlexibleValue]].self, forKey: .files)
        files = rows.map { $0.map(\.text) }
        fields = try container.decode([[String]].self, forKey: .fields)
        pythonMultipartFiles = try container.decodeIfPresent([[FlexibleValue]].self, forKey: .pythonMultipartFiles)?.map { $0.map(\.text) }
        pythonMultipartError = try container.decodeIfPresent(String.self, forKey: .pythonMultipartError)
    }

    private struct FlexibleValue: Decodable {
        var text: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                text = String(number)
            } else if container.decodeNil() {
                text = ""
            } else {
                text = try container.decode(String.self)
            }
        }
    }
}

/// A pipe whose read end is an `InputStream` and whose write end a thread of its own writes.
final class PipeFeed: @unchecked Sendable {
    // `@unchecked`: the descriptors are set once; `writeEnd` is closed once, under `lock`.
    let stream: InputStream
    private let readEnd: Int32
    private var writeEnd: Int32
    private let lock = NSLock()

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0, let stream = InputStream(fileAtPath: "/proc/self/fd/\(fds[0])") else {
            throw TransportTestSupport.Failure(description: "no pipe")
        }
        (readEnd, writeEnd, self.stream) = (fds[0], fds[1], stream)
    }

    deinit {
        close(readEnd)
        closeWriteEnd()
    }

    /// Writes `pieces` from a new thread, then closes the write end (when `closing`).
    func feed(_ pieces: [Data], closing: Bool = true) {
        Thread.detachNewThread { [self] in
            for piece in pieces { write(piece) }
            if closing { closeWriteEnd() }
        }
    }

    /// Writes `data` (blocking until the reader takes it when the pipe is full).
    func write(_ data: Data) {
        let fd = lock.withLock { writeEnd }
        guard fd >= 0 else { return }
        data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let wrote = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                if wrote <= 0 { return }
                done += wrote
            }
        }
    }

    func closeWriteEnd() {
        lock.withLock {
            if writeEnd >= 0 { close(writeEnd) }
            writeEnd = -1
        }
    }
}
