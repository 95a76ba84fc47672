import FormDataKitWire
import CZlib
import Foundation

/// Small helpers shared by the deflater and the inflater: zlib's message for a code, the gzip
/// window settings, and the valid compression levels.
enum ZlibSupport {
    /// `windowBits` for deflate with the gzip wrapper (RFC 1952): a 32 KiB window plus 16.
    static let gzipWindowBits: Int32 = 15 + 16
    /// `windowBits` for inflate that accepts a gzip or a zlib header: a 32 KiB window plus 32.
    static let autoDetectWindowBits: Int32 = 15 + 32
    /// zlib's default memory level (ASIHTTPRequest used it too).
    static let memLevel: Int32 = 8
    /// The compression levels zlib accepts: -1 (zlib's default, 6), 0 (stored) to 9 (smallest).
    static let validLevels: ClosedRange<Int32> = -1...9

    /// `level` with -1 (`Z_DEFAULT_COMPRESSION`) resolved to the level zlib uses for it, 6.
    static func effectiveLevel(_ level: Int32) -> Int32 {
        level == Z_DEFAULT_COMPRESSION ? 6 : level
    }

    /// Throws ``FormDataError/compressionFailed(code:message:)`` unless `level` is one zlib accepts.
    static func validate(level: Int32) throws(FormDataError) {
        guard validLevels.contains(level) else {
            throw .compressionFailed(code: Z_STREAM_ERROR, message: "invalid compression level \(level) (use -1 or 0...9)")
        }
    }

    /// The text for `code`: the stream's own message when zlib set one, else zlib's generic text.
    static func message(_ code: Int32, stream: UnsafeMutablePointer<z_stream>?) -> String {
        if let stream, let text = stream.pointee.msg { return String(cString: text) }
        if let text = zError(code) { return String(cString: text) }
        return ""
    }
}
