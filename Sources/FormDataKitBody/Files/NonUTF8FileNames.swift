#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files whose names are not valid UTF-8 (Linux allows any bytes but `/` and NUL in a name).
///
/// A Swift `String` cannot hold such a name: `CommandLine.arguments`, `String(cString:)` and
/// `String(decoding:as:)` replace each byte that is not UTF-8 with U+FFFD, and the path they
/// give names no file. FormDataKit cannot open such a file by a `String` path, so it refuses it
/// with ``FormDataError/fileNameNotUTF8(path:)``, whose path shows the real bytes (`bad\xFF.txt`)
/// rather than the replacement characters the caller's string holds.
enum NonUTF8FileNames {
    /// `bytes` (a path) as text: valid UTF-8 as it is, every byte of an invalid sequence as
    /// `\xFF`, and a backslash as `\\` (so the escapes cannot be mistaken for the name's own text).
    static func display(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var out = ""
        var index = 0
        while index < bytes.count {
            var iterator = bytes[index...].makeIterator()
            var decoder = UTF8()
            if case .scalarValue(let scalar) = decoder.decode(&iterator) {
                out += scalar == "\\" ? #"\\"# : String(Character(scalar))
                index += UTF8.width(scalar)
            } else {
                let hex = String(bytes[index], radix: 16, uppercase: true)
                out += #"\x"# + (hex.count < 2 ? "0" : "") + hex
                index += 1
            }
        }
        return out
    }

    /// The bytes of the path that `path` was decoded from, when `path` holds U+FFFD, names no
    /// file, and replacing its components' U+FFFD with bytes that are not UTF-8 finds one: each
    /// such component is matched against its directory's entries (the first match in byte
    /// order). Nil otherwise. Only called once a path was not found.
    static func undecodedPath(for path: String) -> [UInt8]? {
        guard path.unicodeScalars.contains("\u{FFFD}") else { return nil }
        var result: [UInt8] = path.hasPrefix("/") ? [UInt8(ascii: "/")] : []
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        for (index, component) in components.enumerated() {
            if index > 0 { result.append(UInt8(ascii: "/")) }
            if !component.unicodeScalars.contains("\u{FFFD}") {
                result.append(contentsOf: component.utf8)
                continue
            }
            guard let entry = entry(in: result.isEmpty ? [UInt8(ascii: ".")] : result, decodingAs: String(component)) else {
                return nil
            }
            result.append(contentsOf: entry)
        }
        var info = stat()
        let exists = (result + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { stat($0.baseAddress!, &info) == 0 }
        }
        return exists ? result : nil
    }

    /// The first entry (in byte order) of `directory` whose name is not valid UTF-8 and decodes,
    /// with U+FFFD for each invalid sequence, to `name`.
    private static func entry(in directory: [UInt8], decodingAs name: String) -> [UInt8]? {
        let stream = (directory + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { opendir($0.baseAddress!) }
        }
        guard let stream else { return nil }
        defer { closedir(stream) }
        var matches: [[UInt8]] = []
        while let entry = readdir(stream) {
            let bytes = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if String(validating: bytes, as: UTF8.self) == nil && String(decoding: bytes, as: UTF8.self) == name {
                matches.append(bytes)
            }
        }
        return matches.min { $0.lexicographicallyPrecedes($1) }
    }
}
