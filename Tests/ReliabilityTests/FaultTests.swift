#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
import Testing

/// Faults injected while a body is built and sent: files that change under the request, a
/// write limit while spooling, a killed process, a receiver that drops or stalls the upload,
/// cancel. Each must end in a clear error, no request with a wrong Content-Length, and no
/// temporary file left behind.
extension Reliability {
    @Suite("Faults")
    struct FaultTests {
        /// A private base for the child's temporary directory (`FORMDATAKIT_TMPDIR`), so what it
        /// leaves behind can be counted exactly.
        static func makeBase(_ label: String) throws -> String {
            let base = NSTemporaryDirectory() + "fdk-fault-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
            return base
        }

        static func storageDirectories(in base: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).filter { $0.hasPrefix(TemporaryStorage.directoryPrefix) }
        }

        /// Writes `size` random bytes (from /dev/urandom: fast in debug builds) to `path`.
        static func writeRandomFile(_ path: String, size: Int, seed: UInt64) throws {
            guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw CocoaError(.fileReadNoPermission) }
            defer { random.closeFile() }
            try random.readData(ofLength: size).write(to: URL(fileURLWithPath: path))
        }

        @Test(
            "A file deleted, truncated or grown between add and send: clear error, nothing sent, nothing left",
            arguments: ["delete", "truncate", "grow"], [false, true])
        func fileChangedBeforeSend(mode: String, gzip: Bool) async throws {
            let server = try await FaultServer.start()
            let base = try Self.makeBase("change")
            defer { try? FileManager.default.removeItem(atPath: base) }
            let file = base + "/input.bin"
            try await offPool { try Self.writeRandomFile(file, size: 1 << 20, seed: 7) }
            let path = "/upload/change-\(mode)-\(gzip)"
            let output = try await Subprocess.run(
                [Subprocess.helperPath, "change", mode, gzip ? "1" : "0", file, server.url(path).absoluteString],
                environment: ["FORMDATAKIT_TMPDIR": base])
            let report = output.report
            let raw = report["raw"] as? String ?? ""
            let entries = try await server.entries(path)
            await server.stop()
            #expect(output.status == 0, "helper failed: \(String(decoding: output.stderr, as: UTF8.self))")
            #expect(report["asiCode"] as? Int == 6, "\(report)")
            #expect(raw.contains(mode == "delete" ? "No file exists" : "changed size"), "\(raw)")
            #expect(raw.contains("input.bin"), "the error names the file: \(raw)")
            #expect(report["leftovers"] as? Int == 0, "temporary files left: \(report)")
            #expect(entries.isEmpty, "a request was sent: \(entries)")
            #expect(Self.storageDirectories(in: base).isEmpty)
        }

        @Test(
            "A write failure while spooling (RLIMIT_FSIZE in a child) is an error and leaves no file",
            arguments: [false, true])
        func spoolWriteFailure(gzip: Bool) async throws {
            let base = try Self.makeBase("fsize")
            defer { try? FileManager.default.removeItem(atPath: base) }
            let file = base + "/input.bin"
            try await offPool { try Self.writeRandomFile(file, size: 4 << 20, seed: 11) }
            // SIGXFSZ ignored (inherited through exec), files limited to 1 MiB: write(2) fails with EFBIG.
            let output = try await Subprocess.run(
                ["bash", "-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\"", Subprocess.helperPath, "spool", file, gzip ? "1" : "0"],
                environment: ["FORMDATAKIT_TMPDIR": base])
            let report = output.report
            let raw = report["raw"] as? String ?? ""
            #expect(
                !output.signalled && output.status == 0, "helper died: \(output.status) \(String(decoding: output.stderr, as: UTF8.self))")
            #expect(raw.contains("write failed") && raw.contains("(errno \(EFBIG))"), "\(raw)")
            #expect(report["asiCode"] as? Int == 8, "\(report)")
            #expect(report["leftovers"] as? Int == 0, "temporary files left: \(report)")
            #expect(Self.storageDirectories(in: base).isEmpty)
        }

        @Test("A process killed mid-spool leaves a stale directory that the next run sweeps")
        func killedMidSpoolIsSwept() async throws {
            let base = try Self.makeBase("kill")
            defer { try? FileManager.default.removeItem(atPath: base) }
            let big = base + "/big.bin"
            // ~96 MB of base64 text at gzip level 9: seconds of spooling to catch it in.
            try await offPool {
                guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw CocoaError(.fileReadNoPermission) }
                defer { random.closeFile() }
                try random.readData(ofLength: 72 << 20).base64EncodedData().write(to: URL(fileURLWithPath: big))
            }
            let process = try SpawnedProcess(
                Subprocess.helperPath, ["spool", big, "1", "slow"],
                environment: ["FORMDATAKIT_TMPDIR": base], stdout: .null, stderr: .null)
            // Watch (on a thread of its own, bounded) until its temporary body file has bytes in it,
            // then SIGKILL it at once.
            let found: (UInt64, String?) = await SpawnedProcess.onOwnThread {
                for _ in 0..<60_000 where process.isRunning {
                    for directory in Self.storageDirectories(in: base) {
                        let path = base + "/" + directory
                        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                            var info = stat()
                            if stat(path + "/" + name, &info) == 0, info.st_size > 0 {
                                process.signal(SIGKILL)
                                return (UInt64(info.st_size), path)
                            }
                        }
                    }
                    usleep(1000)
                }
                return (0, nil)
            }
            let (partialSize, staleDirectory) = found
            process.signal(SIGKILL)
            let ended = await process.wait()
            let stale = try #require(staleDirectory, "the child never wrote a temporary file")
            #expect(ended.signalled)
            #expect(FileManager.default.fileExists(atPath: stale), "the killed process's directory should be left behind")
            print("killed mid-spool: \(partialSize) bytes of compressed body written when SIGKILLed")

            // The next run (another process, same base) sweeps it the first time it needs a temp file.
            let small = base + "/small.txt"
            try Data("hello".utf8).write(to: URL(fileURLWithPath: small))
            let next = try await Subprocess.run([Subprocess.helperPath, "spool", small, "0"], environment: ["FORMDATAKIT_TMPDIR": base])
            #expect(next.report["ok"] as? Bool == true, "\(next.report)")
            #expect(!FileManager.default.fileExists(atPath: stale), "the stale directory was not swept")
            #expect(Self.storageDirectories(in: base).isEmpty, "left: \(Self.storageDirectories(in: base))")
        }

        /// A request with a file of `size` bytes, built, sent by `kind`'s transport: its spooled body
        /// file (nil when the transport streams the parts: nothing is spooled) and the body's sha256.
        static func builtRequest(_ url: URL, size: Int, scratch: String, kind: FaultTransport) throws -> (FormDataRequest, String?, String)
        {
            let file = scratch + "/upload.bin"
            try writeRandomFile(file, size: size, seed: 17)
            let request = FormDataRequest(url: url)
            request.transport = kind.transport
            try request.addFile(file, forKey: "file")
            request.addPostValue("x", forKey: "field")
            try request.buildPostBody()
            if kind.transport.streamsBodySource {
                #expect(!request.isPostBodySpooled)
                guard let source = request.bodySource else { throw CocoaError(.fileNoSuchFile) }
                return (request, nil, SHA256.hex(try source.readAll()))
            }
            guard let bodyPath = request.postBodyFilePath else { throw CocoaError(.fileNoSuchFile) }
            let sha = SHA256.hex(try Data(contentsOf: URL(fileURLWithPath: bodyPath)))
            return (request, bodyPath, sha)
        }

        /// Whether the body file a send used is gone (true when there was none).
        static func removed(_ bodyPath: String?) -> Bool {
            bodyPath.map { !FileManager.default.fileExists(atPath: $0) } ?? true
        }

        @Test(
            "The receiver drops the connection mid-upload: an error, then a new send re-sends the complete body",
            arguments: FaultTransport.allCases)
        func connectionDroppedThenResent(kind: FaultTransport) async throws {
            // In this process, not in a child (Isolation): the 4 MiB body is under URLSessionTransport's
            // in-memory limit, so FoundationNetworking's crashing file reader is never used.
            let server = try await FaultServer.start()
            let scratch = try Self.makeBase("drop")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let path = "/close-first/\(UUID().uuidString)"
            let (request, bodyPath, sha) = try await offPool {
                try Self.builtRequest(server.url(path), size: 4 << 20, scratch: scratch, kind: kind)
            }
            request.timeOutSeconds = 30
            var firstError: FormDataError?
            do throws(FormDataError) { _ = try await request.start() } catch { firstError = error }
            #expect(firstError?.asiErrorCode == 1, "expected a connection failure, got \(String(describing: firstError))")
            #expect(Self.removed(bodyPath), "body file left after the failure")
            let response = try await request.start()
            let answer = try JSONSerialization.jsonObject(with: response.body) as? [String: Any] ?? [:]
            let entries = try await server.entries(path)
            await server.stop()
            #expect(response.statusCode == 200)
            #expect(answer["sha256"] as? String == sha, "the re-sent body differs")
            #expect(answer["received"] as? Int == answer["content_length"] as? Int)
            #expect(entries.count == 2)
            #expect(entries.first?["complete"] as? Bool == false)
            if let bodyPath { #expect(TemporaryStorage.currentFiles().allSatisfy { !$0.hasPrefix(bodyPath) }) }
        }

        @Test("The receiver stalls mid-upload: timeout, and the retry re-sends the complete body", arguments: FaultTransport.allCases)
        func stallTimeoutRetry(kind: FaultTransport) async throws {
            // URLSession in a child (Isolation: FoundationNetworking can crash when a file upload is
            // ended mid-body); curl in this process.
            try await Isolation.run(case: kind.rawValue, isolate: kind == .urlSession) {
                let server = try await FaultServer.start()
                let scratch = try Self.makeBase("stall")
                defer { try? FileManager.default.removeItem(atPath: scratch) }
                let path = "/stall-first/\(UUID().uuidString)"
                let (request, bodyPath, sha) = try await offPool {
                    try Self.builtRequest(server.url(path), size: 24 << 20, scratch: scratch, kind: kind)
                }
                // 3 s (it was 1): a server a busy machine starves for a second while it reads the
                // retry's 24 MiB must not time that out too; the stall lasts 20 s, well past it.
                request.timeOutSeconds = 3
                request.numberOfTimesToRetryOnTimeout = 2
                let response = try await request.start()
                let answer = try JSONSerialization.jsonObject(with: response.body) as? [String: Any] ?? [:]
                let entries = try await server.entries(path)
                await server.stop()
                #expect(request.retryCount >= 1)
                #expect(answer["sha256"] as? String == sha, "the retried body differs")
                #expect(answer["received"] as? Int == answer["content_length"] as? Int)
                #expect(entries.filter { $0["complete"] as? Bool == true }.count == 1)
                #expect(Self.removed(bodyPath), "body file left after the send")
            }
        }

        @Test(
            "Timeout without retries and cancel mid-upload: the error, and no body file left",
            arguments: ["timeout", "cancel"], FaultTransport.allCases)
        func timeoutAndCancelMidUpload(mode: String, kind: FaultTransport) async throws {
            try await Isolation.run(case: "\(mode)-\(kind.rawValue)", isolate: kind == .urlSession) {
                let server = try await FaultServer.start()
                let scratch = try Self.makeBase(mode)
                defer { try? FileManager.default.removeItem(atPath: scratch) }
                let path = "/stall/\(UUID().uuidString)"
                let (request, bodyPath, _) = try await offPool {
                    try Self.builtRequest(server.url(path), size: 24 << 20, scratch: scratch, kind: kind)
                }
                if mode == "timeout" {
                    request.timeOutSeconds = 3  // the server holds 20 s, well past it
                } else {
                    request.timeOutSeconds = 60
                    let cancelled = Locked(false)
                    request.bytesSentBlock = { [weak request] _, _ in
                        if cancelled.update({ done in
                            defer { done = true }
                            return !done
                        }) {
                            request?.cancel()
                        }
                    }
                }
                var failure: FormDataError?
                do throws(FormDataError) { _ = try await request.start() } catch { failure = error }
                await server.stop()
                if mode == "timeout" {
                    #expect(failure?.asiErrorCode == 2, "\(String(describing: failure))")
                } else {
                    #expect(failure == .cancelled, "\(String(describing: failure))")
                }
                #expect(Self.removed(bodyPath), "body file left after \(mode)")
            }
        }
    }
}
