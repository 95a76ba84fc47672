extension StringProtocol {
    /// Whether `self` equals `other` when ASCII letters are compared without case (the rule for
    /// HTTP header names). Much cheaper than Foundation's `caseInsensitiveCompare` on hot paths.
    package func equalsIgnoringASCIICase<Other: StringProtocol>(_ other: Other) -> Bool {
        let lhs = utf8, rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A)
        }
    }
}
