import Foundation
import FormDataKit
@testable import FormDataKitEngine
#if AsyncHTTPClient
import FormDataKitAsyncHTTPClient
#endif
import FormDataKitTesting
import Testing

/// The transports the sending tests run against: every transport this build has — curl and
/// URLSession, and AsyncHTTPClient when the package's AsyncHTTPClient trait is on
/// (`swift test --traits AsyncHTTPClient`).
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case curl
    case urlSession
    case asyncHTTPClient

    /// The kinds this build has.
    static var allCases: [TransportKind] {
        #if AsyncHTTPClient
        return [.curl, .urlSession, .asyncHTTPClient]
        #else
        return [.curl, .urlSession]
        #endif
    }

    /// The process's shared transport of this kind.
    var transport: any FormDataTransport {
        switch self {
        case .curl: return CurlTransport.shared
        case .urlSession: return URLSessionTransport.shared
        case .asyncHTTPClient: return TransportTestSupport.sharedAsyncHTTPClient
        }
    }

    /// Whether a send spools a body over the transport's in-memory limit (URLSession's 8 MiB) to a
    /// temporary file (the others stream the parts).
    var spools: Bool { self == .urlSession }

    var testDescription: String { rawValue }
}

/// The transports that stream bodies and take trust anchors, for suites that make a fresh
/// instance of each: curl, and AsyncHTTPClient with the trait.
enum StreamingTransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case curl
    case asyncHTTPClient
    var testDescription: String { rawValue }

    /// The kinds this build has.
    static var allCases: [StreamingTransportKind] {
        #if AsyncHTTPClient
        return [.curl, .asyncHTTPClient]
        #else
        return [.curl]
        #endif
    }
}

extension TransportTestSupport {
    /// `AsyncHTTPClientTransport.shared` (only with the AsyncHTTPClient trait).
    static var sharedAsyncHTTPClient: any FormDataTransport {
        #if AsyncHTTPClient
        return AsyncHTTPClientTransport.shared
        #else
        preconditionFailure("AsyncHTTPClient cases run only with the AsyncHTTPClient trait")
        #endif
    }

    /// A new AsyncHTTPClient transport (trusting only `pinning`'s certificates when given) and
    /// what shuts it down (only with the AsyncHTTPClient trait).
    static func newAsyncHTTPClient(pinning: TrustAnchorPinning? = nil) throws
        -> (transport: any FormDataTransport, shutdown: @Sendable () async throws -> Void)
    {
        #if AsyncHTTPClient
        let transport = try pinning.map { try AsyncHTTPClientTransport(configuration: .init(pinning: $0)) } ?? AsyncHTTPClientTransport()
        return (transport, { try await transport.shutdown() })
        #else
        preconditionFailure("AsyncHTTPClient cases run only with the AsyncHTTPClient trait")
        #endif
    }
}

/// Helpers for the transport tests: a receiver per test, scratch input files, blocking calls
/// run off the cooperative pool, and a delegate that records events.
enum TransportTestSupport {
    /// The idle timeout of test requests that are not about timeouts: generous, because on a
    /// loaded two-core machine the receivers (on the cooperative pool) can stall for seconds
    /// while other suites run debug-build hashing and compression.
    static let patientTimeout: TimeInterval = 60

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `body` with a fresh receiver on 127.0.0.1 (free port), stopped afterwards.
    static func withReceiver<T>(_ body: (FormReceiver) async throws -> T) async throws -> T {
        let receiver = try await FormReceiver.start()
        do {
            let result = try await body(receiver)
            await receiver.stop()
            return result
        } catch {
            await receiver.stop()
            throw error
        }
    }

    /// Runs a blocking call (such as `startSynchronous()`) on a plain thread, so the cooperative
    /// pool the receiver runs on is never blocked.
    @discardableResult
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// Runs a blocking, throwing call (starting a server process, running `openssl`, hashing a
    /// large file) on a plain thread, so it never holds one of the cooperative pool's threads.
    @discardableResult
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let result: Result<T, any Error> = await blocking { Result { try body() } }
        return try result.get()
    }

    /// How `request` ended: its response, or its error.
    static func outcome(of request: FormDataRequest) async -> Result<FormDataResponse, FormDataError> {
        do { return .success(try await request.start()) } catch { return .failure(error) }
    }

    static let scratchPrefix = "fdk-transport-test-"

    /// Removes scratch directories left by test processes that died (killed mid-test).
    static let sweptStaleScratch: Bool = {
        let base = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(scratchPrefix) {
            guard let pid = Int32(name.dropFirst(scratchPrefix.count).split(separator: "-").first ?? ""),
                pid != getpid(), kill(pid, 0) == -1, errno == ESRCH
            else { continue }
            try? FileManager.default.removeItem(atPath: base + name)
        }
        return true
    }()

    /// A scratch file of `size` pseudo-random bytes (seeded), removed by ``ScratchFile/remove()``.
    /// Its directory is named after this process, so a later run sweeps it if this one is killed.
    static func makeFile(size: Int, seed: UInt64 = 1, name: String = "input.bin") throws -> ScratchFile {
        _ = sweptStaleScratch
        let directory = NSTemporaryDirectory() + "\(scratchPrefix)\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        let data = randomData(size: size, seed: seed)
        try data.write(to: URL(fileURLWithPath: path))
        return ScratchFile(directory: directory, path: path, data: data)
    }

    /// `size` pseudo-random bytes from a fixed-seed generator (xorshift).
    static func randomData(size: Int, seed: UInt64) -> Data {
        var state = seed == 0 ? 0x9E3779B97F4A7C15 : seed
        var data = Data(count: size)
        data.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) in
            for index in 0..<size {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                bytes[index] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    /// Whether a file exists at `path`.
    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
}

/// A file made for a test.
struct ScratchFile {
    let directory: String
    let path: String
    let data: Data

    var sha256: String { SHA256.hex(data) }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// A delegate that records every event, in order.
final class RecordingDelegate: FormDataRequestDelegate, @unchecked Sendable {
    // `@unchecked`: `events` and `sent` are only touched under `lock`.
    private let lock = NSLock()
    private var events: [String] = []
    private var sent: [Int64] = []
    private let onSend: (@Sendable (FormDataRequest) -> Void)?

    init(onSend: (@Sendable (FormDataRequest) -> Void)? = nil) { self.onSend = onSend }

    private func record(_ event: String) {
        lock.lock()
        defer { lock.unlock() }
        if events.last != event || event != "sent" { events.append(event) }
    }

    /// The events with consecutive "sent" collapsed into one.
    var log: [String] { lock.withLock { events } }
    /// Every didSendBytes value.
    var sentIncrements: [Int64] { lock.withLock { sent } }

    func requestStarted(_ request: FormDataRequest) { record("started") }
    func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String]) { record("headers") }
    func requestFinished(_ request: FormDataRequest) { record("finished") }
    func requestFailed(_ request: FormDataRequest) { record("failed") }
    func request(_ request: FormDataRequest, didSendBytes bytes: Int64) {
        lock.withLock { sent.append(bytes) }
        record("sent")
        onSend?(request)
    }
}

/// Sends `request` through `transport` with the send driver, as the façades do (redirects,
/// limits, the idle clock, the checks on what reaches the wire), and returns how it ended.
func drive(_ request: TransportRequest, on transport: any FormDataTransport) async -> Result<FormDataResponse, FormDataError> {
    await withCheckedContinuation { continuation in
        SendDriver(request: request, transport: transport) { event in
            if case .finished(let result, _) = event { continuation.resume(returning: result) }
        }.start()
    }
}
