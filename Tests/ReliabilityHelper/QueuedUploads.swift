#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import Foundation

/// A value of /proc/self/status (`VmRSS:`, `VmHWM:`), in KiB.
func statusKiB(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
    }
    return -1
}

/// `count` uploads of a `sizeKiB` file each (sparse: no disk used, read as zeros) through one
/// `NetworkQueue`, 4 at a time, with accurate progress. Reports the resident set after all were
/// queued (before `go()`), the peak over the whole run, how many finished, the queue's final
/// progress, and the temporary files left.
func runQueuedUploads(count: Int, sizeKiB: Int, url: URL) -> Never {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fdk-queued-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let transport = CurlTransport()
    let queue = NetworkQueue()
    queue.showAccurateProgress = true
    let baseline = statusKiB("VmRSS")
    for index in 0..<count {
        let path = "\(directory)/photo\(index).jpg"
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        guard fd >= 0, ftruncate(fd, off_t(sizeKiB) * 1024) == 0 else { report(["error": "cannot create \(path)"]) }
        close(fd)
        let request = FormDataRequest(url: url)
        request.transport = transport
        request.timeOutSeconds = 60
        request.setPostValue("\(index)", forKey: "index")
        do { try request.addFile(path, forKey: "photo") } catch { report(describe(error)) }
        do { try queue.addOperation(request) } catch { report(describe(error)) }
    }
    let queued = statusKiB("VmRSS")
    let spooled = TemporaryStorage.currentFiles().count
    let started = Date()
    queue.go()
    queue.waitUntilAllOperationsAreFinished()
    report([
        "requests": count, "sizeKiB": sizeKiB, "baselineRSSKiB": baseline, "queuedRSSKiB": queued, "peakRSSKiB": statusKiB("VmHWM"),
        "filesWhileQueued": spooled, "uploadedBytes": queue.bytesUploadedSoFar, "totalBytes": queue.totalBytesToUpload,
        "fraction": queue.uploadProgress.fractionCompleted, "seconds": Date().timeIntervalSince(started),
        "requestsCountAfter": queue.requestsCount,
    ])
}
