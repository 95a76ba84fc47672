@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// The boundaries FormDataKit makes: ASIHTTPRequest's shape (its prefix and an uppercase random
/// version 4 UUID) and AFNetworking's, drawn fresh every time.
@Suite("Generated multipart boundaries")
struct GeneratedBoundaryTests {
    @Test("ASI's: the prefix, then an uppercase version 4 UUID; 2,000 in a row are all different and valid")
    func asiShape() throws {
        var seen = Set<String>()
        for _ in 0..<2_000 {
            let boundary = MultipartBoundary.makeASIBoundary()
            #expect(MultipartBoundary.isValid(boundary))
            let prefix = "0xKhTmLbOuNdArY-"
            try #require(boundary.hasPrefix(prefix))
            let uuid = Array(boundary.dropFirst(prefix.count).utf8)
            try #require(uuid.count == 36)
            for (index, byte) in uuid.enumerated() {
                if [8, 13, 18, 23].contains(index) {
                    #expect(byte == UInt8(ascii: "-"))
                } else {
                    #expect((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46), "not an uppercase hex digit at \(index)")
                }
            }
            #expect(uuid[14] == UInt8(ascii: "4"))  // version 4
            #expect([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "A"), UInt8(ascii: "B")].contains(uuid[19]))  // RFC 4122 variant
            seen.insert(boundary)
        }
        #expect(seen.count == 2_000)
    }

    @Test("every one of the 122 random bits of the UUID is seen both ways in 256 boundaries (no byte left unfilled)")
    func everyBitVaries() {
        var ones = [UInt8](repeating: 0, count: 16)
        var zeros = [UInt8](repeating: 0, count: 16)
        for _ in 0..<256 {
            let hex = MultipartBoundary.makeASIBoundary().dropFirst("0xKhTmLbOuNdArY-".count).filter { $0 != "-" }
            let bytes = stride(from: 0, to: 32, by: 2).map { offset -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            }
            for index in 0..<16 {
                ones[index] |= bytes[index]
                zeros[index] |= ~bytes[index]
            }
        }
        var fixedBits = [UInt8](repeating: 0, count: 16)
        fixedBits[6] = 0xF0  // the version nibble
        fixedBits[8] = 0xC0  // the variant bits
        for index in 0..<16 {
            #expect(ones[index] | fixedBits[index] == 0xFF, "byte \(index) has bits never set")
            #expect(zeros[index] | fixedBits[index] == 0xFF, "byte \(index) has bits never cleared")
        }
    }

    @Test("boundaries drawn on 8 threads at once (the random bytes come from one shared pool) are all different")
    func differentAcrossThreads() {
        let perThread = 1_000
        let drawn = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var mine: [String] = []
            for index in 0..<perThread {
                mine.append(index % 2 == 0 ? MultipartBoundary.makeASIBoundary() : MultipartBoundary.make(.afNetworking))
            }
            drawn.withLock { $0 += mine }
        }
        #expect(drawn.current.count == 8 * perThread)
        #expect(Set(drawn.current).count == 8 * perThread)
    }
}
