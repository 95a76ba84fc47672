import FormDataKit
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Shared fixtures of the before/after examples: the fixed boundaries, temporary files, the
/// embedded receiver.
enum Example {
    /// An ASIFormDataRequest-shaped boundary (`0xKhTmLbOuNdArY-` + uppercase UUID), fixed so the
    /// bytes can be compared with the reference's worked example.
    static let asiBoundary = "0xKhTmLbOuNdArY-A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"
    /// An AFNetworking-shaped boundary (`Boundary+` + 16 uppercase hex digits), fixed likewise.
    static let afBoundary = "Boundary+0123456789ABCDEF"
    /// Where the offline examples pretend to upload.
    static let uploadURL = URL(string: "http://example.com/upload")!
    /// ASI's multipart and AF's multipart differ in the boundary and in ASI's `charset=` parameter.
    static let acrossFacades: FormSnapshotTolerance = [.boundary, .charsetParameter]

    /// One transport for the examples that send.
    static let transport = URLSessionTransport()

    /// Sends `request` through the examples' transport, with a generous idle timeout (the
    /// machine running the tests may be busy; ASI's default is 10 s).
    static func prepareToSend(_ request: FormDataRequest) {
        request.transport = transport
        request.timeOutSeconds = 60
    }

    /// The built body of `request`, wherever the build put it (memory or spooled file).
    static func body(_ request: FormDataRequest) throws -> Data {
        try request.buildPostBody()
        if let path = request.postBodyFilePath { return try Data(contentsOf: URL(fileURLWithPath: path)) }
        return request.postBody ?? Data()
    }

    /// Runs `body` with a fresh private directory, removed afterwards.
    static func withDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("FormDataKit-examples-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    /// ``withDirectory(_:)`` for async bodies.
    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("FormDataKit-examples-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// Writes `data` to `name` in `directory`.
    @discardableResult
    static func write(_ data: Data, named name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// Runs `body` with an embedded receiver on 127.0.0.1 (a free port), stopped afterwards.
    static func withReceiver<T>(recordingDirectory: URL? = nil, _ body: (FormReceiver) async throws -> T) async throws -> T {
        let receiver = try await FormReceiver.start(recordingDirectory: recordingDirectory)
        do {
            let result = try await body(receiver)
            await receiver.stop()
            return result
        } catch {
            await receiver.stop()
            throw error
        }
    }

    /// Starts `queue` and waits until every request in it has ended, on a thread of its own
    /// (`waitUntilAllOperationsAreFinished()` blocks; never on a task's thread).
    static func drain(_ queue: NetworkQueue) async {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                queue.go()
                queue.waitUntilAllOperationsAreFinished()
                continuation.resume()
            }
        }
    }

    /// A JPEG-looking file (SOI marker, then a pattern), 4 KiB.
    static let photoBytes = Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<4092).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// `text` with CRLF line ends, as bytes.
    static func crlf(_ lines: [String]) -> Data { Data(lines.joined(separator: "\r\n").utf8) }
}

/// A thread-safe accumulator for callbacks (`@Sendable` closures run on the request's queue).
final class Tally<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Changes the value under the lock.
    func update(_ change: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&value)
    }

    /// The value now.
    var current: Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
