extension StringProtocol {
    /// Whether `self` equals `other` when ASCII letters are compared without case (the rule for
    /// HTTP header names). Much cheaper than Foundation's `caseInsensitiveCompare` on hot paths.
    package func equalsIgnoringASCIICase<Other: StringProtocol>(_ other: Other) -> Bool {
        let lhs = utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        // Native strings expose their UTF-8 contiguously: compare the buffers directly.
        let contiguous: Bool? =
            lhs.withContiguousStorageIfAvailable { left in
                rhs.withContiguousStorageIfAvailable { right in
                    for index in 0..<left.count where !Self.asciiCaseInsensitiveEqual(left[index], right[index]) {
                        return false
                    }
                    return true
                }
            } ?? nil
        if let contiguous { return contiguous }
        return zip(lhs, rhs).allSatisfy(Self.asciiCaseInsensitiveEqual)
    }

    @inline(__always)
    private static func asciiCaseInsensitiveEqual(_ a: UInt8, _ b: UInt8) -> Bool {
        a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A)
    }
}

extension StringProtocol {
    /// Whether any of `self`'s UTF-8 bytes satisfies `isMatch`: one pass over the bytes where the
    /// string holds them contiguously (native strings), instead of stepping its UTF-8 view.
    @inline(__always)
    package func containsUTF8Byte(where isMatch: (UInt8) -> Bool) -> Bool {
        utf8.withContiguousStorageIfAvailable { $0.contains(where: isMatch) } ?? utf8.contains(where: isMatch)
    }
}
