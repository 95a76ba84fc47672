import FormDataKitBody
import FormDataKitWire
import Foundation

/// RFC 9110's preferred HTTP-date form, IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), read
/// without a `DateFormatter` (locale-free, no shared mutable formatter). The obsolete RFC 850 and
/// asctime forms are not read: a `Retry-After` in them counts as absent.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays: Set<String> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// The instant `text` names, or nil when it is not an IMF-fixdate.
    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), weekdays.contains(String(parts[0].prefix(3))),
            parts[5] == "GMT", parts[1].count == 2, let day = Int(parts[1]), let monthIndex = months.firstIndex(of: parts[2]),
            parts[3].count == 4, let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]), let minute = Int(clock[1]),
            let second = Int(clock[2]), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return Date(
            timeIntervalSince1970: Double(daysSinceEpoch(year: year, month: monthIndex + 1, day: day)) * 86_400
                + Double(hour * 3600 + minute * 60 + second))
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// A small seeded generator (SplitMix64) for the send state machine's jitter: the machine stays
/// a value, and a test that fixes the seed sees the same waits every run.
struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
