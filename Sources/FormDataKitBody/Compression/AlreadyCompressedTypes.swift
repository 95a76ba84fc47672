import FormDataKitWire
import Foundation

/// The content types whose bytes are already compressed, so deflating them again only burns CPU
/// (random-looking data shrinks by nothing at any level). With adaptive compression on, form
/// parts of these types are stored (deflate level 0) inside the gzip stream.
///
/// The list, matched case-insensitively on the type without its parameters (`; charset=…`):
///
/// - Images: `image/jpeg`, `image/pjpeg`, `image/jpg`, `image/png`, `image/apng`, `image/gif`,
///   `image/webp`, `image/heic`, `image/heic-sequence`, `image/heif`, `image/heif-sequence`,
///   `image/avif`, `image/jp2`, `image/jxl`
/// - Video: `video/mp4`, `video/quicktime`, `video/webm`, `video/x-matroska`, `video/mpeg`,
///   `video/x-m4v`, `video/3gpp`, `video/3gpp2`, `video/x-msvideo`, `video/x-flv`, `video/ogg`
/// - Audio: `audio/mpeg`, `audio/mp3`, `audio/aac`, `audio/mp4`, `audio/x-m4a`, `audio/ogg`,
///   `audio/opus`, `audio/webm`, `audio/flac`, `audio/x-flac`, `audio/3gpp`, `audio/3gpp2`
/// - Archives and compressed data: `application/zip`, `application/x-zip-compressed`,
///   `application/gzip`, `application/x-gzip`, `application/x-7z-compressed`,
///   `application/x-bzip2`, `application/x-xz`, `application/zstd`, `application/x-zstd`,
///   `application/vnd.rar`, `application/x-rar-compressed`, `application/x-lzip`,
///   `application/x-lzma`, `application/x-compress`, `application/java-archive`,
///   `application/vnd.android.package-archive`, `application/epub+zip`
/// - Office formats that are ZIP containers: `application/vnd.openxmlformats-officedocument.*`
///   (docx, xlsx, pptx) and `application/vnd.oasis.opendocument.*` (odt, ods, odp)
/// - Fonts: `font/woff`, `font/woff2`
public enum AlreadyCompressedTypes {
    /// Every exact type in the list (lowercase, without parameters).
    public static let exactTypes: Set<String> = [
        "image/jpeg", "image/pjpeg", "image/jpg", "image/png", "image/apng", "image/gif", "image/webp",
        "image/heic", "image/heic-sequence", "image/heif", "image/heif-sequence", "image/avif",
        "image/jp2", "image/jxl",
        "video/mp4", "video/quicktime", "video/webm", "video/x-matroska", "video/mpeg", "video/x-m4v",
        "video/3gpp", "video/3gpp2", "video/x-msvideo", "video/x-flv", "video/ogg",
        "audio/mpeg", "audio/mp3", "audio/aac", "audio/mp4", "audio/x-m4a", "audio/ogg", "audio/opus",
        "audio/webm", "audio/flac", "audio/x-flac", "audio/3gpp", "audio/3gpp2",
        "application/zip", "application/x-zip-compressed", "application/gzip", "application/x-gzip",
        "application/x-7z-compressed", "application/x-bzip2", "application/x-xz", "application/zstd",
        "application/x-zstd", "application/vnd.rar", "application/x-rar-compressed", "application/x-lzip",
        "application/x-lzma", "application/x-compress", "application/java-archive",
        "application/vnd.android.package-archive", "application/epub+zip",
        "font/woff", "font/woff2",
    ]

    /// Type prefixes in the list (families of ZIP-container office formats).
    public static let typePrefixes: [String] = [
        "application/vnd.openxmlformats-officedocument.",
        "application/vnd.oasis.opendocument.",
    ]

    /// Whether `contentType` (parameters allowed, any case) is in the list.
    /// - Parameter contentType: a part's `Content-Type`, e.g. `image/jpeg; name=x`.
    /// - Returns: true for types whose content is already compressed (stored, not deflated again).
    public static func contains(_ contentType: String) -> Bool {
        let bare =
            contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
            .first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if exactTypes.contains(bare) { return true }
        return typePrefixes.contains { bare.hasPrefix($0) }
    }
}
