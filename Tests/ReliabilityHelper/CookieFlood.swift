#if canImport(Glibc)
import Glibc
#endif
import FormDataKit
import Foundation

/// A process-status figure in KiB (`VmHWM:` is the peak resident set, `VmRSS:` the current one).
func processStatusKiB(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        let number = line.dropFirst(field.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first
        return Int(number ?? "") ?? -1
    }
    return -1
}

/// `count` sends one after another on one `CurlTransport`, to `url/0` … `url/<count-1>`, each
/// answered with 50 new cookies of about 4 KB: reports how many succeeded, the jar's cookie
/// count after them, and the process's peak and current resident set.
/// With `perDomainLimit`, the jar keeps that many per domain (and at least as many in all).
func runCookieFlood(count: Int, url: URL, perDomainLimit: Int?) -> Never {
    var configuration = CurlTransport.Configuration()
    if let perDomainLimit {
        configuration.maximumCookiesPerDomain = perDomainLimit
        configuration.maximumCookies = max(perDomainLimit, configuration.maximumCookies)
    }
    let transport = CurlTransport(configuration: configuration)
    var ok = 0
    for round in 0..<count {
        let request = FormDataRequest(url: url.appendingPathComponent(String(round)))
        request.transport = transport
        request.requestMethod = "GET"
        request.timeOutSeconds = 30
        request.startSynchronous()
        if request.error == nil, request.responseStatusCode == 200 { ok += 1 }
    }
    report([
        "sent": count, "ok": ok, "cookies": transport.storedCookieCount,
        "peakRSSKiB": processStatusKiB("VmHWM:"), "rssKiB": processStatusKiB("VmRSS:"),
    ])
}
