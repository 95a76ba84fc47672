@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing
@testable import FormDataKit

/// The fast paths the benchmark drove (issue 7) against their simple equivalents: the byte
/// accumulator behind BodyBuilder, the ASCII case-insensitive compare on contiguous and
/// non-contiguous UTF-8, and Content-Disposition escaping.
@Suite("Fast paths equal the simple paths")
struct FastPathTests {
    struct Rng {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    @Test("ByteAccumulator holds exactly what was appended, across growth and hand-overs")
    func accumulatorMatchesArray() {
        var rng = Rng(state: 7)
        let accumulator = ByteAccumulator(capacity: 3)
        for round in 0..<5 {
            var reference: [UInt8] = []
            for _ in 0..<(200 + round * 300) {
                let piece = (0..<rng.next(700)).map { _ in UInt8(truncatingIfNeeded: rng.next(256)) }
                piece.withUnsafeBufferPointer { accumulator.append($0) }
                reference += piece
                #expect(accumulator.count == reference.count)
            }
            let mark = reference.count / 3
            let tail = accumulator.withBytes(from: mark) { Array($0) }
            #expect(tail == Array(reference[mark...]))
            let data = accumulator.takeData()
            #expect(Array(data) == reference)
            #expect(accumulator.count == 0)
            #expect(accumulator.withBytes(from: 0) { $0.count } == 0)
        }
        #expect(accumulator.takeData().isEmpty)
    }

    @Test("BodyBuilder coalesces text, data and bytes into the bytes of a plain concatenation")
    func builderMatchesConcatenation() throws {
        var builder = BodyBuilder(encoding: .utf8, debug: false, expectedSize: 10)
        var reference: [UInt8] = []
        var rng = Rng(state: 11)
        let alphabet = ["a", "é", "€", "😀", "\r\n", "--", " "]
        for index in 0..<2_000 {
            switch index % 3 {
            case 0:
                let text = (0..<rng.next(40)).map { _ in alphabet[rng.next(alphabet.count)] }.joined()
                try builder.appendText(text, field: "f", role: .value)
                reference += Array(text.utf8)
            case 1:
                let data = Data((0..<rng.next(300)).map { _ in UInt8(truncatingIfNeeded: rng.next(256)) })
                builder.appendData(data, partContentType: nil)
                reference += Array(data)
            default:
                builder.appendASCII("--b\r\n")
                reference += Array("--b\r\n".utf8)
            }
        }
        let source = builder.finish()
        #expect(source.segments.count == 1)
        guard case .bytes(let bytes) = source.segments[0].content else {
            Issue.record("expected one in-memory segment")
            return
        }
        #expect(Array(bytes) == reference)
    }

    @Test("equalsIgnoringASCIICase: contiguous and non-contiguous UTF-8 agree with a plain rule")
    func caseInsensitiveCompare() {
        func reference(_ a: String, _ b: String) -> Bool {
            let x = Array(a.utf8)
            let y = Array(b.utf8)
            guard x.count == y.count else { return false }
            func fold(_ c: UInt8) -> UInt8 { (0x41...0x5A).contains(c) ? c + 0x20 : c }
            return zip(x, y).allSatisfy { fold($0) == fold($1) }
        }
        var rng = Rng(state: 3)
        let alphabet = ["a", "A", "z", "Z", "-", "@", "`", "[", "{", "é", "É", "0"]
        for _ in 0..<2_000 {
            let a = (0..<rng.next(6)).map { _ in alphabet[rng.next(alphabet.count)] }.joined()
            let b = rng.next(2) == 0 ? a.uppercased() : (0..<rng.next(6)).map { _ in alphabet[rng.next(alphabet.count)] }.joined()
            #expect(a.equalsIgnoringASCIICase(b) == reference(a, b), "\(a) vs \(b)")
            // A bridged NSString (no contiguous UTF-8 on Darwin) takes the general path.
            let bridged = NSString(string: b) as String
            #expect(a.equalsIgnoringASCIICase(bridged) == reference(a, b))
            #expect(a.dropFirst(0).equalsIgnoringASCIICase(b[...]) == reference(a, b))
        }
    }

    @Test("Content-Disposition escaping: only quote, CR and LF change, everything else is kept")
    func dispositionEscaping() {
        let cases: [(String, String)] = [
            ("plain", "plain"), ("a\"b", "a%22b"), ("a\r\nb", "a%0D%0Ab"), ("日本\"語", "日本%22語"),
            ("😀\n", "😀%0A"), ("", ""), ("%22", "%22"),
        ]
        for (input, expected) in cases {
            #expect(HeaderParameterEscaping.escape(input) == expected)
        }
        #expect(
            HeaderParameterEscaping.formDataDisposition(name: "a\"", fileName: "f\r.txt")
                == "form-data; name=\"a%22\"; filename=\"f%0D.txt\"")
        #expect(HeaderParameterEscaping.formDataDisposition(name: "n", fileName: nil) == "form-data; name=\"n\"")
    }
}
