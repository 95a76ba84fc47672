#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import Foundation

/// The process's thread count now (`Threads:` of /proc/self/status).
func currentThreadCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? -1
    }
    return -1
}

/// `count` multipart sends (three fields and a 2 KiB file) started at once with
/// `startAsynchronous()` on one `CurlTransport`; reports how many succeeded and the process's
/// peak thread count while they ran (sampled every millisecond by one thread of its own,
/// counted in the peak).
func runConcurrentSends(count: Int, url: URL) -> Never {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("fdk-concurrent-\(getpid()).bin").path
    _ = FileManager.default.createFile(atPath: file, contents: Data(repeating: 0x5A, count: 2048))
    defer { unlink(file) }
    let transport = CurlTransport()
    let peak = ThreadPeak()
    let done = DispatchGroup()
    let outcomes = OutcomeCount()
    peak.startSampling()
    for index in 0..<count {
        let request = FormDataRequest(url: url)
        request.transport = transport
        request.timeOutSeconds = 60
        request.setPostValue("value \(index)", forKey: "a")
        request.setPostValue("second", forKey: "b")
        request.setPostValue("third", forKey: "c")
        do { try request.addFile(file, forKey: "file") } catch { report(describe(error)) }
        done.enter()
        request.completionBlock = { [unowned request] in
            outcomes.record(ok: request.responseStatusCode == 200)
            done.leave()
        }
        request.failedBlock = {
            outcomes.record(ok: false)
            done.leave()
        }
        request.startAsynchronous()
    }
    done.wait()
    let highest = peak.stop()
    report(["sent": count, "ok": outcomes.ok, "peakThreads": highest, "threadsAfter": currentThreadCount()])
}

/// Samples the thread count on a thread of its own until stopped; keeps the highest.
final class ThreadPeak: @unchecked Sendable {
    // `@unchecked`: `highest` and `running` are touched only under `lock`.
    private let lock = NSLock()
    private var highest = 0
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    func startSampling() {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let now = currentThreadCount()
                lock.withLock { highest = max(highest, now) }
                usleep(1000)
            }
            finished.signal()
        }
    }

    func stop() -> Int {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { highest }
    }
}

/// How many sends succeeded.
final class OutcomeCount: @unchecked Sendable {
    // `@unchecked`: `value` is touched only under `lock`.
    private let lock = NSLock()
    private var value = 0

    func record(ok: Bool) { if ok { lock.withLock { value += 1 } } }
    var ok: Int { lock.withLock { value } }
}
