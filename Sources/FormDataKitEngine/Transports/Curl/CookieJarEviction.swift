import FormDataKitBody
import FormDataKitWire

/// Which cookies a full jar lets go: a pure function of the jar's lines, as RFC 6265 §5.3 orders
/// it (expired cookies are already gone from libcurl's list): first the cookies of a domain that
/// holds more than its limit, then — while the jar holds more than its total — those of the
/// domains holding the most; the oldest first within a domain (libcurl lists a domain's cookies
/// in the order they were first set).
enum CookieJarEviction {
    /// The most cookies a jar keeps.
    struct Limits: Sendable, Equatable {
        /// For one domain (a host-only cookie's host, or a `Domain` attribute's domain).
        var perDomain: Int
        /// In the whole jar.
        var total: Int
    }

    /// The indices of `lines` (Netscape cookie-file lines, in the jar's order) to evict so that
    /// no domain holds more than `limits.perDomain` and the jar no more than `limits.total`.
    static func linesToEvict(_ lines: [Substring], limits: Limits) -> [Int] {
        let perDomain = max(0, limits.perDomain)
        let total = max(0, limits.total)
        guard lines.count > min(perDomain, total) else { return [] }
        // Each domain's lines, oldest first, in the order domains first appear.
        var order: [Substring] = []
        var byDomain: [Substring: [Int]] = [:]
        for (index, line) in lines.enumerated() {
            let key = domain(of: line)
            if byDomain[key] == nil { order.append(key) }
            byDomain[key, default: []].append(index)
        }
        // How many each domain keeps: at most `perDomain`, then levelled down to a common
        // height while the sum is over `total` (the domains with the most lose first).
        var keep = order.map { min(byDomain[$0]!.count, perDomain) }
        if keep.reduce(0, +) > total {
            var level = keep.max() ?? 0
            func kept(at level: Int) -> Int { keep.reduce(0) { $0 + min($1, level) } }
            // The highest level at which the jar fits, by bisection.
            var low = 0
            while low < level {
                let middle = (low + level + 1) / 2
                if kept(at: middle) <= total { low = middle } else { level = middle - 1 }
            }
            var room = total - kept(at: low)
            keep = keep.map { count in
                guard count > low else { return count }
                if room > 0 {
                    room -= 1
                    return low + 1
                }
                return low
            }
        }
        var evicted: [Int] = []
        for (position, key) in order.enumerated() {
            let indices = byDomain[key]!
            evicted.append(contentsOf: indices.prefix(indices.count - keep[position]))
        }
        return evicted.sorted()
    }

    /// The domain a Netscape cookie-file line is kept for: its first field, without libcurl's
    /// `#HttpOnly_` prefix or a leading dot, lower-cased.
    static func domain(of line: Substring) -> Substring {
        var field = line.prefix { $0 != "\t" }
        if field.hasPrefix("#HttpOnly_") { field = field.dropFirst("#HttpOnly_".count) }
        while field.hasPrefix(".") { field = field.dropFirst() }
        return field.contains(where: \.isUppercase) ? Substring(field.lowercased()) : field
    }

    /// Whether a Netscape cookie-file line has an expiry (its fifth field, seconds since 1970;
    /// 0 for a session cookie) before `now`.
    static func hasExpired(_ line: Substring, now: Int) -> Bool {
        let fields = line.split(separator: "\t", maxSplits: 5, omittingEmptySubsequences: false)
        guard fields.count > 4, let expiry = Int(fields[4]) else { return false }
        return expiry != 0 && expiry < now
    }

    /// The same cookie with an expiry in the past (its fifth field, `1`): given to libcurl's
    /// `CURLOPT_COOKIELIST`, it replaces the cookie and is then dropped as expired. Nil when the
    /// line is not a Netscape cookie line.
    static func expiredLine(_ line: Substring) -> String? {
        var fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count >= 7 else { return nil }
        fields[4] = "1"
        return fields.joined(separator: "\t")
    }
}
