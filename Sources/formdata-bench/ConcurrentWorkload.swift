#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// `concurrent`: 200 uploads (20 with `--quick`) of one field plus one 1 MiB file, multipart, all
/// started at once to the loopback ``DiscardReceiver`` — through ONE transport instance in one
/// child process (FormDataKit curl: one `CurlTransport()`; FormDataKit AsyncHTTPClient:
/// `AsyncHTTPClientTransport.shared`), against as many `curl -F` processes started together by
/// one bash (the reference of the "this ÷ ref" column). Each row's time is the wall time of its
/// whole command (process start-up included); its MB/s is the files' bytes over that time. The
/// child checks that every upload was answered 200; the driver that the receiver read every
/// request completely.
enum ConcurrentWorkload {
    static let fileBytes = 1 << 20
    static let reference = "curl -F"

    static func run(uploads: Int, runs: Int, in directory: WorkloadDirectory, into report: inout Report) throws {
        let file = try directory.generate("concurrent-1mib.bin", size: fileBytes, seed: 31, text: false)
        let receiver = try DiscardReceiver()
        defer { receiver.stop() }
        let url = "http://127.0.0.1:\(receiver.port)/upload"
        let workload = "concurrent \(uploads)× 1 MiB"
        let hasCurl = toolExists("curl") && toolExists("bash")
        let total = uploads * fileBytes
        func row(_ tool: String, _ note: String) -> ResultRow {
            ResultRow(
                workload: workload, tool: tool, bytes: total, seconds: [], peakRSSKiB: 0, note: note,
                reference: hasCurl ? "\(uploads)× \(reference)" : nil)
        }
        var cases = [
            MeasuredCase(
                row: row(
                    "FormDataKit curl (one CurlTransport())",
                    "one process, one transport, \(uploads) `try await request.start()` in a TaskGroup; wall time incl. start-up"),
                timing: .wallClock, command: [selfPath, "--child", "concurrent", "curl", url, String(uploads), file],
                requests: uploads)
        ]
        #if AsyncHTTPClient
        cases.append(
            MeasuredCase(
                row: row(
                    "FormDataKit AsyncHTTPClient (.shared)",
                    "as above, AsyncHTTPClientTransport.shared (its pool's own per-host connection limit applies)"),
                timing: .wallClock, command: [selfPath, "--child", "concurrent", "asynchttpclient", url, String(uploads), file],
                requests: uploads))
        #endif
        if hasCurl {
            cases.append(
                MeasuredCase(
                    row: row(
                        "\(uploads)× \(reference)",
                        "ref; \(uploads) curl processes started together by one bash, Expect: 100-continue (answered); peak RSS: the largest single process"
                    ),
                    timing: .wallClock, command: ["bash", "-c", curlScript, "concurrent-curl", url, file, String(uploads), ""],
                    requests: uploads))
        }
        for _ in 0..<runs {
            for index in cases.indices where !cases[index].failed {
                cases[index].measure(
                    receiver: receiver, bodyBytesAbove: fileBytes,
                    stdoutPath: "\(directory.path)/concurrent-stdout", failures: &report.failures)
            }
        }
        // The sum of the curl processes' peak RSS, from one more (untimed) run with each curl
        // under GNU time: the figure for "the memory of 200 uploads" as separate processes.
        if hasCurl, let index = cases.indices.last, !cases[index].failed, FileManager.default.isExecutableFile(atPath: "/usr/bin/time") {
            let rssDirectory = "\(directory.path)/concurrent-rss"
            try? FileManager.default.removeItem(atPath: rssDirectory)
            try FileManager.default.createDirectory(atPath: rssDirectory, withIntermediateDirectories: true)
            receiver.reset()
            let result = runMeasured(["bash", "-c", curlScript, "concurrent-curl", url, file, String(uploads), rssDirectory])
            let kib =
                (try? FileManager.default.contentsOfDirectory(atPath: rssDirectory))?.compactMap { name -> Int? in
                    let text = try? String(contentsOfFile: "\(rssDirectory)/\(name)", encoding: .utf8)
                    return text?.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                } ?? []
            if result.status == 0, kib.count == uploads {
                cases[index].row.note += String(
                    format: "; sum of the %d processes' peak RSS: %.1f MiB (one extra run; shared library pages counted in each)",
                    uploads, Double(kib.reduce(0, +)) / 1024)
            } else {
                cases[index].row.note += "; sum of peak RSS: not measured (exit \(result.status), \(kib.count) reports)"
            }
        }
        report.rows += cases.map(\.finishedRow)
    }

    /// Starts `$3` `curl -F` uploads of field + `$2` to `$1` at once and waits for all; exits 1
    /// when any failed. With `$4` set, each curl runs under GNU time, its peak RSS in `$4/rss.N`.
    static let curlScript = """
        url=$1; file=$2; count=$3; rss=$4; pids=()
        for ((i = 0; i < count; i++)); do
            if [ -n "$rss" ]; then
                /usr/bin/time -f %M -o "$rss/rss.$i" curl -sS -o /dev/null --fail -F "field=value $i" -F "file=@$file" "$url" &
            else
                curl -sS -o /dev/null --fail -F "field=value $i" -F "file=@$file" "$url" &
            fi
            pids+=($!)
        done
        status=0
        for pid in "${pids[@]}"; do wait "$pid" || status=1; done
        exit $status
        """

    /// The child: `concurrent <curl|asynchttpclient> <url> <count> <file>` — `count` requests of
    /// one field and the file, started together through one transport (`curl`: a new
    /// `CurlTransport()`), each `try await request.start()` in a task group; fails unless every
    /// answer is 200.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 4, let url = URL(string: arguments[1]), let count = Int(arguments[2]), count > 0 else {
            throw BenchError.usage("concurrent TRANSPORT URL COUNT FILE")
        }
        let transport = try SendWorkload.childTransport(arguments[0], shared: false)
        let file = arguments[3]
        let failures = runBlocking {
            await withTaskGroup(of: String?.self) { group in
                for index in 0..<count {
                    group.addTask {
                        let request = FormDataRequest(url: url)
                        request.transport = transport
                        request.timeOutSeconds = 120
                        request.addPostValue("value \(index)", forKey: "field")
                        do {
                            try request.addFile(file, forKey: "file")
                            let response = try await request.start()
                            return response.statusCode == 200 ? nil : "upload \(index): status \(response.statusCode)"
                        } catch {
                            return "upload \(index): \(error)"
                        }
                    }
                }
                var failures: [String] = []
                for await failure in group {
                    if let failure { failures.append(failure) }
                }
                return failures
            }
        }
        guard failures.isEmpty else {
            throw BenchError.childFailed(
                "\(failures.count) of \(count) uploads failed; first: \(failures.prefix(3).joined(separator: "; "))")
        }
    }
}

/// Runs `body` on the global executor and blocks the calling thread until it returns.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = BlockingResult<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// ``runBlocking(_:)``'s result.
private final class BlockingResult<T: Sendable>: @unchecked Sendable {
    // `@unchecked`: written once by the task before the semaphore is signalled, read after.
    var value: T?
}
