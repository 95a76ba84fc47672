#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
import Testing

/// 200 concurrent uploads of mixed sizes (some gzip) from one process to a loopback receiver:
/// every body arrives whole (the sha256 of the wire bytes, computed by the receiver, equals
/// sha256sum of the built body), none is lost, no temporary file is left, peak RSS is reported.
///
/// CI: sizes 1 KiB–4 MiB; `FORMDATAKIT_LONG=1`: 1 KiB–50 MiB.
extension Reliability {
    @Suite("Load")
    struct LoadTests {
        struct Summary: Sendable {
            var bytes: Int
            var sha256: String?
            var contentLength: Int?
            var problem: String?
        }

        /// Peak resident set size of this process so far (VmHWM), in KiB.
        static func peakRSSKiB() -> Int {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            }
            return 0
        }

        @Test("200 concurrent uploads: 0 lost, 0 corrupted, 0 temporary files left")
        func concurrentUploads() async throws {
            let uploads = 200
            let maxSize = longRun ? 50 << 20 : 4 << 20
            let scratch = NSTemporaryDirectory() + "fdk-load-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: scratch) }

            // The receiver is a separate process (Support/fault_server.py, route /upload): it hashes
            // every body it reads, and the Swift concurrency pool stays free for the other suites.
            let server = try await FaultServer.start()
            // A random 1 MiB block; each upload's content is it rotated and repeated (cheap to make).
            // Built off the concurrency pool: spooling is blocking I/O.
            let receiverURL = server.url("/")
            let (requests, totalBytes) = try await offPool { () throws -> ([(FormDataRequest, String, Int, Int)], Int) in
                guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw CocoaError(.fileReadNoPermission) }
                let block = random.readData(ofLength: 1 << 20)
                random.closeFile()
                var rng = SeededGenerator(seed: 0x10AD)
                var requests: [(FormDataRequest, String, Int, Int)] = []
                var totalBytes = 0
                for index in 0..<uploads {
                    let size = Int(exp(Double.random(in: log(1024.0)...log(Double(maxSize)), using: &rng)))
                    let rotation = index * 4099 % block.count
                    var content = Data(capacity: size)
                    let rotated = block[rotation...] + block[..<rotation]
                    while content.count < size { content.append(rotated.prefix(size - content.count)) }
                    let request = FormDataRequest(url: receiverURL.appendingPathComponent("upload/\(index)"))
                    request.transport = Reliability.transport
                    request.timeOutSeconds = 300
                    request.shouldCompressRequestBody = index % 4 == 0
                    request.addPostValue("upload \(index)", forKey: "name")
                    if size > 256 << 10 {
                        let path = scratch + "/file-\(index).bin"
                        try content.write(to: URL(fileURLWithPath: path))
                        try request.addFile(path, forKey: "file")
                    } else {
                        request.addData(content, withFileName: "data-\(index).bin", andContentType: nil, forKey: "file")
                    }
                    try request.buildPostBody()
                    guard let bodyPath = request.compressedPostBodyFilePath ?? request.postBodyFilePath else {
                        throw CocoaError(.fileNoSuchFile)
                    }
                    requests.append((request, bodyPath, index, Int(request.postLength)))
                    totalBytes += Int(request.postLength)
                }
                return (requests, totalBytes)
            }
            // The sha256 of every built body, by an independent tool, before anything is sent.
            let hashed = try await Subprocess.run(["sha256sum"] + requests.map(\.1))
            var expected: [String: String] = [:]
            for line in String(decoding: hashed.stdout, as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1)
                if parts.count == 2 { expected[String(parts[1].drop { $0 == " " || $0 == "*" })] = String(parts[0]) }
            }
            let rssBefore = Self.peakRSSKiB()
            let started = Date()
            let results = await withTaskGroup(of: (Int, Result<FormDataResponse, FormDataError>).self) { group in
                for (request, _, index, _) in requests {
                    group.addTask {
                        do throws(FormDataError) { return (index, .success(try await request.start())) } catch {
                            return (index, .failure(error))
                        }
                    }
                }
                var all: [Int: Result<FormDataResponse, FormDataError>] = [:]
                for await (index, result) in group { all[index] = result }
                return all
            }
            let seconds = Date().timeIntervalSince(started)
            let rssPeak = Self.peakRSSKiB()
            var seen: [String: Summary] = [:]
            for entry in try await server.log() {
                guard let path = entry["path"] as? String else { continue }
                seen[path] = Summary(
                    bytes: entry["received"] as? Int ?? -1, sha256: entry["sha256"] as? String,
                    contentLength: entry["content_length"] as? Int,
                    problem: entry["complete"] as? Bool == true ? nil : "incomplete")
            }
            await server.stop()

            var lost = 0
            var corrupted = 0
            var failed: [String] = []
            var leftovers = 0
            for (_, bodyPath, index, length) in requests {
                if case .failure(let error) = results[index] ?? .failure(.cancelled) { failed.append("\(index): \(error)") }
                guard let summary = seen["/upload/\(index)"] else {
                    lost += 1
                    continue
                }
                if summary.bytes != length || summary.contentLength != length
                    || summary.sha256 != expected[bodyPath] || summary.problem != nil
                {
                    corrupted += 1
                    failed.append("\(index): \(summary) vs \(length) \(expected[bodyPath] ?? "?")")
                }
                if FileManager.default.fileExists(atPath: bodyPath) { leftovers += 1 }
            }
            print(
                "load: \(uploads) concurrent uploads, \(totalBytes) bytes on the wire (\(uploads / 4) gzip), \(String(format: "%.1f", seconds)) s; lost \(lost), corrupted \(corrupted), failed \(failed.count), temp files left \(leftovers); peak RSS \(rssBefore / 1024) MiB before sending, \(rssPeak / 1024) MiB after (process-wide VmHWM)"
            )
            #expect(lost == 0)
            #expect(corrupted == 0)
            #expect(failed.isEmpty, "\(failed.prefix(5))")
            #expect(leftovers == 0)
            #expect(expected.count == uploads)
            // Bodies stream from disk: memory must not grow with the bytes sent.
            #expect(rssPeak - rssBefore < (longRun ? 1536 : 768) * 1024, "peak RSS grew by \((rssPeak - rssBefore) / 1024) MiB")
        }
    }
}
