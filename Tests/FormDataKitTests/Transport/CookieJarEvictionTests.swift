@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
@testable import FormDataKit
import Testing

/// Which cookies a full jar lets go: per-domain limit first (oldest first), then the total taken
/// from the domains holding the most. Pure: lines in, indices out.
@Suite("Cookie jar eviction")
struct CookieJarEvictionTests {
    /// A Netscape cookie-file line as libcurl lists it.
    static func line(_ domain: String, _ name: String, httpOnly: Bool = false, subdomains: Bool = false) -> Substring {
        let host = (httpOnly ? "#HttpOnly_" : "") + (subdomains ? "." : "") + domain
        return Substring("\(host)\t\(subdomains ? "TRUE" : "FALSE")\t/\tFALSE\t0\t\(name)\tvalue")
    }

    @Test("a jar within its limits keeps everything")
    func withinLimits() {
        let lines = (0..<5).map { Self.line("a.test", "c\($0)") }
        #expect(CookieJarEviction.linesToEvict(lines, limits: .init(perDomain: 5, total: 10)).isEmpty)
    }

    @Test("a domain over its limit loses its oldest cookies; other domains keep theirs")
    func perDomainOldestFirst() {
        var lines: [Substring] = []
        for index in 0..<6 {
            lines.append(Self.line("a.test", "a\(index)", httpOnly: index == 0, subdomains: index % 2 == 0))
            if index < 2 { lines.append(Self.line("b.test", "b\(index)")) }
        }
        // a.test at 0, 2, 4, 6, 7, 8 (the b.test lines are 1 and 3); keep the newest four of a.test.
        #expect(CookieJarEviction.linesToEvict(lines, limits: .init(perDomain: 4, total: 100)) == [0, 2])
    }

    @Test("over the total, the domains holding the most lose first, down to a common level")
    func totalLevelsTheLargestDomains() {
        let lines =
            (0..<10).map { Self.line("big.test", "x\($0)") } + (0..<4).map { Self.line("mid.test", "y\($0)") }
            + [Self.line("small.test", "z")]
        // 15 cookies, 9 allowed: big 10 → 4, mid 4 stays 4, small 1 → big and mid level at 4.
        let evicted = CookieJarEviction.linesToEvict(lines, limits: .init(perDomain: 180, total: 9))
        #expect(evicted == Array(0..<6))
        // 8 allowed: one more must go; the levels are big 4, mid 3 or big 3, mid 4 — one of the two.
        let tighter = CookieJarEviction.linesToEvict(lines, limits: .init(perDomain: 180, total: 8))
        #expect(tighter.count == 7)
        #expect(tighter == Array(0..<6) + [10] || tighter == Array(0..<7))
    }

    @Test("a domain's case and leading dot and libcurl's #HttpOnly_ prefix do not split it")
    func domainKey() {
        #expect(CookieJarEviction.domain(of: Self.line("Example.TEST", "a", httpOnly: true, subdomains: true)) == "example.test")
        #expect(CookieJarEviction.domain(of: Self.line("example.test", "a")) == "example.test")
    }

    @Test("an evicted cookie is given back to libcurl expired: same fields, expiry 1")
    func expiredLine() {
        let expired = CookieJarEviction.expiredLine(Self.line("a.test", "name"))
        #expect(expired == "a.test\tFALSE\t/\tFALSE\t1\tname\tvalue")
        #expect(CookieJarEviction.expiredLine("not a cookie line") == nil)
    }
}
