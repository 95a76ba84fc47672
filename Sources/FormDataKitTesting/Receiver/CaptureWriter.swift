#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

extension FormReceiver {
    /// The highest number `N` of a capture `N-METHOD.http` in `directory` (0 when there is none).
    static func highestCaptureNumber(in directory: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { name -> Int? in
            guard name.hasSuffix(".http"), let dash = name.firstIndex(of: "-") else { return nil }
            let digits = name[..<dash]
            guard !digits.isEmpty, digits.count <= 9, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(digits)
        }.max() ?? 0
    }
}

/// A receiver's recording: the directory (created 0700), the numbering, and the limits — no
/// capture over ``FormReceiver/Limits/maxCaptureBytes``, no more captures once they take
/// ``FormReceiver/Limits/maxRecordedBytes`` in all.
final class Recorder: Sendable {
    let directory: URL
    private let maxCaptureBytes: Int
    private let maxRecordedBytes: Int
    private let log: @Sendable (String) -> Void
    /// The last capture number taken, and the bytes recorded so far.
    private let state: Locked<(number: Int, recorded: Int, full: Bool)>

    init(directory: URL, limits: FormReceiver.Limits, log: @escaping @Sendable (String) -> Void) throws {
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        self.directory = directory
        maxCaptureBytes = limits.maxCaptureBytes
        maxRecordedBytes = limits.maxRecordedBytes
        self.log = log
        state = Locked((FormReceiver.highestCaptureNumber(in: directory), 0, false))
    }

    private func nextNumber() -> Int {
        state.withLock {
            $0.number += 1
            return $0.number
        }
    }

    /// A writer for `request`'s capture, or nil when recording has stopped at its total limit
    /// (or the file cannot be created).
    func begin(_ request: LoopbackHTTPServer.Request) -> CaptureWriter? {
        guard !state.withLock({ $0.full }) else { return nil }
        return CaptureWriter(directory: directory, number: nextNumber(), request: request, limit: maxCaptureBytes)
    }

    /// Puts `writer`'s capture in place; its path, or nil when it was not recorded (over a
    /// limit, or writing failed), which is logged.
    func finish(_ writer: CaptureWriter) -> String? {
        guard !writer.overLimit else {
            writer.abandon()
            log("not recorded: a request over the capture limit of \(maxCaptureBytes) bytes (--record-max)")
            return nil
        }
        let size = writer.size
        let admitted = state.withLock { state -> Bool in
            guard !state.full, state.recorded + size <= maxRecordedBytes else {
                state.full = true
                return false
            }
            state.recorded += size
            return true
        }
        guard admitted else {
            writer.abandon()
            log("recording stopped: the captures would pass \(maxRecordedBytes) bytes (--record-total-max)")
            return nil
        }
        return writer.finish(nextNumber: nextNumber)
    }
}

/// Writes one request as a raw capture while its body streams in: head first, then each body
/// chunk (re-framed as a chunk when the request came chunked); renamed into place when complete,
/// never over an existing file.
final class CaptureWriter {
    private let handle: FileHandle
    private let directory: URL
    private let partialURL: URL
    private let method: String
    private let number: Int
    private let chunked: Bool
    private let limit: Int
    private var failed = false
    /// Bytes written so far.
    private(set) var size = 0
    /// Whether the capture grew past its limit (writing stopped there).
    private(set) var overLimit = false

    init?(directory: URL, number: Int, request: LoopbackHTTPServer.Request, limit: Int) {
        self.directory = directory
        self.number = number
        self.limit = limit
        method = request.method.filter { $0.isASCII && $0.isLetter }
        partialURL = directory.appendingPathComponent(".\(Self.name(number, method)).partial")
        // 0600 from the start (never readable by others, even for a moment): a capture holds
        // credentials, cookies and form passwords.
        let fd = open(partialURL.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        chunked = request.isChunked
        let query = request.encodedQuery
        let target = request.encodedPath + (query.isEmpty ? "" : "?" + query)
        let head = RawHTTPRequest(
            method: request.method, target: target, version: "HTTP/1.1",
            headers: request.headers.sorted { $0.name < $1.name }.map { ReceivedHeader(name: $0.name, value: $0.value) },
            body: Data()
        ).head
        write(raw: head)
    }

    /// `0001-POST.http`: the number with at least four digits, the method's letters.
    private static func name(_ number: Int, _ method: String) -> String {
        String(repeating: "0", count: max(0, 4 - String(number).count)) + "\(number)-\(method).http"
    }

    func write(_ chunk: Data) {
        guard !chunk.isEmpty else { return }
        if chunked {
            write(raw: Data((String(chunk.count, radix: 16) + "\r\n").utf8))
            write(raw: chunk)
            write(raw: Data("\r\n".utf8))
        } else {
            write(raw: chunk)
        }
    }

    private func write(raw data: Data) {
        guard !failed, !overLimit else { return }
        guard size + data.count <= limit else {
            overLimit = true
            return
        }
        size += data.count
        do { try handle.write(contentsOf: data) } catch { failed = true }
    }

    /// Closes and removes the unfinished file.
    func abandon() {
        try? handle.close()
        try? FileManager.default.removeItem(at: partialURL)
    }

    /// Closes the file and moves it into place; the final path, or nil when writing failed. When
    /// a file already has the capture's name (another writer in the same directory), the capture
    /// takes the number `nextNumber` gives instead.
    func finish(nextNumber: () -> Int) -> String? {
        if chunked { write(raw: Data("0\r\n\r\n".utf8)) }
        if overLimit { failed = true }
        try? handle.close()
        var number = self.number
        if !failed {
            for _ in 0..<100 {
                let finalURL = directory.appendingPathComponent(Self.name(number, method))
                // link(2) fails when the name exists: an existing capture is never replaced.
                if link(partialURL.path, finalURL.path) == 0 {
                    try? FileManager.default.removeItem(at: partialURL)
                    return finalURL.path
                }
                if errno != EEXIST, !FileManager.default.fileExists(atPath: finalURL.path),
                    (try? FileManager.default.moveItem(at: partialURL, to: finalURL)) != nil
                {
                    return finalURL.path  // a file system without hard links
                }
                guard FileManager.default.fileExists(atPath: finalURL.path) else { break }
                number = nextNumber()
            }
        }
        try? FileManager.default.removeItem(at: partialURL)
        return nil
    }
}
