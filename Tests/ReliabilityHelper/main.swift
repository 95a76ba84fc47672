// A child process for ReliabilityTests' fault injection: it runs one scenario with FormDataKit
// in a process of its own (its own temporary directory, its own resource limits, killable) and
// prints one JSON line: what failed, ASI's error code, and the temporary files left behind at
// that moment (counted before exit, when the per-process directory is still there).
//
//   reliability-helper spool FILE GZIP(0|1) [slow]   build and spool a body from FILE (under `ulimit -f`, or killed)
//   reliability-helper change MODE(delete|truncate|grow) GZIP FILE URL   change FILE after adding it, then send
//   reliability-helper concurrent COUNT URL   COUNT small multipart sends at once on one CurlTransport; the
//                                               process's peak thread count while they run
//   reliability-helper cookie-flood COUNT URL [PER-DOMAIN]   COUNT sends to URL/<n> (a server setting 50 cookies of ~4 KB
//                                               each); the jar's cookie count and the peak RSS after
//   reliability-helper resume FORMAT SIZE_KIB GZIP URL LIMIT [curl|asynchttpclient]   one upload
//                                               (multipart|urlencoded|raw) with resumable uploads on; the server's
//                                               answer, the body's sha256, resumptions, peak RSS
//   reliability-helper queue COUNT SIZE_KIB URL   COUNT uploads of a SIZE_KIB file through one NetworkQueue,
//                                               4 at a time; resident set queued and at peak
#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import Foundation

func report(_ values: [String: Any]) -> Never {
    var values = values
    values["leftovers"] = TemporaryStorage.currentFiles().count
    values["tmpdir"] = (try? TemporaryStorage.directory()) ?? ""
    let data = (try? JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])) ?? Data()
    FileHandle.standardOutput.write(data + Data("\n".utf8))
    exit(0)
}

func describe(_ error: any Error) -> [String: Any] {
    if let error = error as? FormDataError {
        return ["error": "\(error)", "asiCode": error.asiErrorCode, "raw": String(reflecting: error)]
    }
    return ["error": "\(error)", "raw": String(reflecting: error)]
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { report(["error": "usage"]) }
switch arguments[1] {
case "spool":
    let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
    // A transport that takes files and keeps nothing in memory: the send spools the body (a
    // build never does; a compressed body is compressed to a file at build).
    request.transport = URLSessionTransport(inMemoryFileBodyLimit: 0)
    request.shouldCompressRequestBody = arguments[3] == "1"
    if arguments.count > 4 { request.compressionLevel = 9 }
    do {
        try request.addFile(arguments[2], forKey: "file")
        request.addPostValue("value", forKey: "field")
        FileHandle.standardError.write(Data("building\n".utf8))
        try request.buildPostBody()
        if let error = request.startSynchronous(), case .fileManagement = error { throw error }
        report(["ok": true, "postLength": request.postLength, "files": TemporaryStorage.currentFiles()])
    } catch {
        report(describe(error))
    }
case "change":
    let mode = arguments[2]
    let path = arguments[4]
    let request = FormDataRequest(url: URL(string: arguments[5])!)
    request.shouldCompressRequestBody = arguments[3] == "1"
    request.timeOutSeconds = 30
    do {
        try request.addFile(path, forKey: "file")
    } catch {
        report(describe(error))
    }
    switch mode {
    case "delete": unlink(path)
    case "truncate": truncate(path, 1000)
    default:
        let handle = FileHandle(forWritingAtPath: path)!
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0x41, count: 4096))
        handle.closeFile()
    }
    request.startSynchronous()
    if let error = request.error {
        report(describe(error).merging(["status": request.responseStatusCode]) { a, _ in a })
    }
    report(["ok": true, "status": request.responseStatusCode])
case "concurrent":
    runConcurrentSends(count: Int(arguments[2]) ?? 0, url: URL(string: arguments[3])!)
case "cookie-flood":
    runCookieFlood(
        count: Int(arguments[2]) ?? 0, url: URL(string: arguments[3])!, perDomainLimit: arguments.count > 4 ? Int(arguments[4]) : nil)
case "resume":
    runResumedUpload(
        format: arguments[2], sizeKiB: Int(arguments[3]) ?? 0, gzip: arguments[4] == "1", url: URL(string: arguments[5])!,
        limit: Int(arguments[6]) ?? 3, transport: arguments.count > 7 ? arguments[7] : "curl")
case "queue":
    runQueuedUploads(count: Int(arguments[2]) ?? 0, sizeKiB: Int(arguments[3]) ?? 0, url: URL(string: arguments[4])!)
default:
    report(["error": "unknown command \(arguments[1])"])
}
