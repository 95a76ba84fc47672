import FormDataKitWire
import Foundation

/// File-extension → MIME type lookup for file parts (Linux has no UTI database).
///
/// A built-in table of common types comes first; `/etc/mime.types` (when present) fills in
/// extensions the table lacks. Lookups are case-insensitive; unknown or missing extensions give
/// `application/octet-stream`.
package enum MIMETypes {
    /// The type for content FormDataKit knows nothing about.
    package static let fallback = "application/octet-stream"

    /// The built-in table (extension → type).
    static let builtIn: [String: String] = [
        // text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "tsv": "text/tab-separated-values", "ics": "text/calendar", "vcf": "text/vcard",
        "js": "text/javascript", "mjs": "text/javascript", "rtf": "application/rtf",
        "xml": "application/xml", "json": "application/json", "yaml": "application/yaml",
        "yml": "application/yaml", "plist": "application/x-plist",
        // certificates and keys
        "cer": "application/x-x509-ca-cert", "crt": "application/x-x509-ca-cert",
        "der": "application/x-x509-ca-cert", "pem": "application/x-pem-file",
        "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
        // images
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "png": "image/png",
        "gif": "image/gif", "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff",
        "webp": "image/webp", "heic": "image/heic", "heif": "image/heif", "avif": "image/avif",
        "svg": "image/svg+xml", "ico": "image/x-icon",
        // audio
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav",
        "aif": "audio/aiff", "aiff": "audio/aiff", "caf": "audio/x-caf", "ogg": "audio/ogg",
        "oga": "audio/ogg", "flac": "audio/flac", "opus": "audio/opus", "mid": "audio/midi",
        "midi": "audio/midi",
        // video
        "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "qt": "video/quicktime",
        "avi": "video/x-msvideo", "mpg": "video/mpeg", "mpeg": "video/mpeg", "webm": "video/webm",
        "mkv": "video/x-matroska", "3gp": "video/3gpp", "ogv": "video/ogg",
        // documents
        "pdf": "application/pdf", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "epub": "application/epub+zip",
        "pages": "application/x-iwork-pages-sffpages", "key": "application/x-iwork-keynote-sffkey",
        "numbers": "application/x-iwork-numbers-sffnumbers",
        // archives and binaries
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "bz2": "application/x-bzip2", "xz": "application/x-xz", "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar", "tar": "application/x-tar", "zst": "application/zstd",
        "jar": "application/java-archive", "apk": "application/vnd.android.package-archive",
        "ipa": "application/octet-stream", "dmg": "application/x-apple-diskimage",
        "bin": "application/octet-stream", "exe": "application/octet-stream",
        "wasm": "application/wasm", "sqlite": "application/vnd.sqlite3",
        // fonts
        "ttf": "font/ttf", "otf": "font/otf", "woff": "font/woff", "woff2": "font/woff2",
    ]

    /// Extensions from `/etc/mime.types`, read once.
    private static let system: [String: String] = loadMimeTypesFile(at: "/etc/mime.types")

    /// The MIME type for `fileExtension` (without the dot), or nil when it is unknown.
    package static func type(forExtension fileExtension: String) -> String? {
        let key = fileExtension.lowercased()
        return builtIn[key] ?? system[key]
    }

    /// The MIME type for the file name or path `name`, falling back to `application/octet-stream`.
    package static func type(forFileName name: String) -> String {
        // By bytes: "/" and "." are ASCII, and a search by Character costs a grapheme break check per step.
        let bytes = name.utf8
        let lastStart = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? bytes.startIndex
        guard let dot = bytes[lastStart...].lastIndex(of: UInt8(ascii: ".")), dot != lastStart else { return fallback }
        let ext = String(name[bytes.index(after: dot)...])
        return ext.isEmpty ? fallback : (type(forExtension: ext) ?? fallback)
    }

    /// Parses a `mime.types` file: `type ext ext …` per line, `#` comments. The first mapping of an
    /// extension wins.
    static func loadMimeTypesFile(at path: String) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        var table: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if line.first == "#" { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count > 1, fields[0].contains("/") else { continue }
            for ext in fields.dropFirst() where table[ext.lowercased()] == nil {
                table[ext.lowercased()] = String(fields[0])
            }
        }
        return table
    }
}
