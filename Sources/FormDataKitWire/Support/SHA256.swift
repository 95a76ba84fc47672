import Foundation

/// SHA-256 (FIPS 180-4), incremental: feed bytes with ``update(_:)``, read ``hexDigest``.
/// Used for public-key pins (``NetworkPinning``) and by the test receiver to fingerprint file
/// parts without keeping them.
public struct SHA256: Sendable {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private var h: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    /// A fresh hash.
    public init() { pending.reserveCapacity(64) }

    /// The hex SHA-256 of `data`.
    /// - Parameter data: the bytes to hash.
    /// - Returns: 64 lowercase hexadecimal digits.
    public static func hex<D: DataProtocol>(_ data: D) -> String {
        var hash = SHA256()
        hash.update(data)
        return hash.hexDigest
    }

    /// Adds `data` to the hash.
    /// - Parameter data: the next bytes of the message.
    public mutating func update<D: DataProtocol>(_ data: D) {
        for region in data.regions {
            region.withUnsafeBytes { update(bytes: $0) }
        }
    }

    /// Adds raw bytes to the hash.
    /// - Parameter bytes: the next bytes of the message.
    public mutating func update(bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var index = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            index = take
            if pending.count == 64 {
                let block = pending
                pending.removeAll(keepingCapacity: true)
                block.withUnsafeBytes { compress($0.baseAddress!) }
            }
        }
        while bytes.count - index >= 64 {
            compress(bytes.baseAddress! + index)
            index += 64
        }
        if index < bytes.count { pending.append(contentsOf: bytes[index...]) }
    }

    /// The digest of everything added so far, as 64 lowercase hex digits (the hash can go on).
    public var hexDigest: String {
        digest.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }

    /// The digest of everything added so far, 32 bytes (the hash can go on).
    public var digest: [UInt8] {
        var copy = self
        let bitLength = copy.length &* 8
        var tail: [UInt8] = [0x80]
        let used = (copy.pending.count + 1) % 64
        tail += [UInt8](repeating: 0, count: used <= 56 ? 56 - used : 120 - used)
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        let savedLength = copy.length
        tail.withUnsafeBytes { copy.update(bytes: $0) }
        copy.length = savedLength
        return copy.h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }

    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            Self.k.withUnsafeBufferPointer { k in
                compress(block, schedule: w.baseAddress!, constants: k.baseAddress!)
            }
        }
    }

    // Written with masking shifts (`&>>`, `&<<`) and raw pointers: an unoptimized (debug) build
    // then runs it at tens of MB/s instead of ~4 (the smart shifts, the array subscripts and the
    // rotate calls each cost a call and a retain there), which tests hashing large files need.
    private mutating func compress(
        _ block: UnsafeRawPointer, schedule w: UnsafeMutablePointer<UInt32>, constants k: UnsafePointer<UInt32>
    ) {
        for i in 0..<16 {
            w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
        }
        for i in 16..<64 {
            let x = w[i &- 15]
            let y = w[i &- 2]
            let s0 = (x &>> 7 | x &<< 25) ^ (x &>> 18 | x &<< 14) ^ (x &>> 3)
            let s1 = (y &>> 17 | y &<< 15) ^ (y &>> 19 | y &<< 13) ^ (y &>> 10)
            w[i] = w[i &- 16] &+ s0 &+ w[i &- 7] &+ s1
        }
        var a = h[0]
        var b = h[1]
        var c = h[2]
        var d = h[3]
        var e = h[4]
        var f = h[5]
        var g = h[6]
        var hh = h[7]
        for i in 0..<64 {
            let s1 = (e &>> 6 | e &<< 26) ^ (e &>> 11 | e &<< 21) ^ (e &>> 25 | e &<< 7)
            let ch = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ ch &+ k[i] &+ w[i]
            let s0 = (a &>> 2 | a &<< 30) ^ (a &>> 13 | a &<< 19) ^ (a &>> 22 | a &<< 10)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            hh = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
        }
        h[0] &+= a
        h[1] &+= b
        h[2] &+= c
        h[3] &+= d
        h[4] &+= e
        h[5] &+= f
        h[6] &+= g
        h[7] &+= hh
    }
}
