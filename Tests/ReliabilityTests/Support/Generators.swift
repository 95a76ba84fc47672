import Foundation

/// A seeded pseudo-random generator (SplitMix64): the same seed gives the same forms on every
/// machine, so a failing case is reproduced from the seed it prints.
struct SeededGenerator: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// A string of 0…`maxPieces` pieces from `alphabet`.
    mutating func text(_ alphabet: [String], maxPieces: Int) -> String {
        (0..<int(0...maxPieces)).map { _ in pick(alphabet) }.joined()
    }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            var index = 0
            while index < raw.count {
                var word = next()
                for _ in 0..<8 where index < raw.count {
                    raw[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return data
    }
}

/// One value field of a generated form.
struct GeneratedValue: Sendable {
    var name: String
    var value: String
}

/// One file field of a generated form: in memory, or written to disk before it is added.
struct GeneratedFile: Sendable {
    var name: String
    var fileName: String
    var contentType: String
    var data: Data
    var onDisk: Bool
}

/// A random form: the hostile characters the legacy libraries got wrong, in names, file names
/// and values, and binary files of random sizes (0 included).
struct GeneratedForm: Sendable {
    var seed: UInt64
    var values: [GeneratedValue]
    var files: [GeneratedFile]
    var gzip: Bool

    /// Pieces of names and file names: quotes, CR, LF, non-ASCII, boundary-like text.
    /// No backslash: browsers send it raw and parsers disagree on it (peers-and-limits §5).
    /// No NUL: a multipart name or filename with NUL is refused (`invalidHeaderValue`; tested in
    /// HardeningTests), since parsers cut C strings there.
    static let nameAlphabet = [
        "a", "b", "Z", "0", "_", "-", " ", ".", "[", "]", "\"", "\r", "\n", "\r\n", "é", "€", "日本", "😀",
        "--", ";", "=", "%", "%22", "'", "\t", "\r\n--0xKhTmLbOuNdArY-", "--Boundary+", ":",
    ]
    /// Pieces of values: every name piece, plus NUL, backslash, `&`, `+`, `/` and whole fake delimiters.
    static let valueAlphabet =
        nameAlphabet + [
            "\0", "\\", "&", "+", "/", "\r\n--0xKhTmLbOuNdArY-1234\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n",
            "\r\n--Boundary+0123456789ABCDEF--\r\n", "\r\n\r\n", "--\r\n", "\u{FEFF}", "\u{7F}", "\u{85}", "\u{2028}",
        ]
    static let contentTypes = [
        "application/octet-stream", "text/plain", "text/plain; charset=utf-8", "image/png", "image/jpeg",
        "application/zip", "application/x-custom+json", "video/mp4",
    ]

    /// A form for `seed`. `largeFiles` allows the occasional file of up to 1 MiB.
    static func make(seed: UInt64, largeFiles: Bool) -> GeneratedForm {
        var rng = SeededGenerator(seed: seed)
        var values: [GeneratedValue] = []
        for _ in 0..<rng.int(0...6) {
            let name = rng.chance(0.05) ? "" : rng.text(nameAlphabet, maxPieces: 6)
            let value = rng.chance(0.15) ? "" : rng.text(valueAlphabet, maxPieces: 10)
            values.append(GeneratedValue(name: name, value: value))
        }
        var files: [GeneratedFile] = []
        for index in 0..<rng.int(values.isEmpty ? 1...3 : 0...3) {
            let name = rng.text(nameAlphabet, maxPieces: 4) + "f\(index)"
            let fileName = rng.chance(0.05) ? "" : rng.text(nameAlphabet, maxPieces: 5) + ".bin"
            let size: Int
            switch rng.int(0...99) {
            case 0..<15: size = 0
            case 15..<75: size = rng.int(1...2048)
            case 75..<97: size = rng.int(2049...65536)
            default: size = largeFiles ? rng.int(65537...(1 << 20)) : rng.int(2049...65536)
            }
            var data = rng.bytes(size)
            if size > 40, rng.chance(0.3) {
                // Boundary-like text inside binary content.
                let fake = Data("\r\n--0xKhTmLbOuNdArY-\r\n--Boundary+".utf8)
                let at = rng.int(0...(size - fake.count))
                data.replaceSubrange(at..<(at + fake.count), with: fake)
            }
            files.append(
                GeneratedFile(
                    name: name, fileName: fileName, contentType: rng.pick(contentTypes), data: data, onDisk: rng.chance(0.5)))
        }
        return GeneratedForm(seed: seed, values: values, files: files, gzip: rng.chance(0.5))
    }
}

/// What an escaped name or file name looks like on the wire (WHATWG: `"` → `%22`, CR → `%0D`,
/// LF → `%0A`, nothing else), written independently of the engine's escaping.
func wireEscaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "%22"
        case "\r": out += "%0D"
        case "\n": out += "%0A"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// What Werkzeug reports for an escaped name: it turns `%22` back into `"` (and keeps `%0D`/`%0A`).
func werkzeugSees(_ text: String) -> String {
    wireEscaped(text).replacingOccurrences(of: "%22", with: "\"")
}

/// Whether long runs were asked for (`FORMDATAKIT_LONG=1`).
var longRun: Bool { ProcessInfo.processInfo.environment["FORMDATAKIT_LONG"] == "1" }
