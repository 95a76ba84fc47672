import FormDataKit
import Foundation

/// The MIME type for a file's extension, as AFNetworking's `AFContentTypeForPathExtension`
/// answered it (from UTType on Apple platforms; from FormDataKit's table here).
enum AFMIMEType {
    /// The type for `pathExtension` (case-insensitive), or `application/octet-stream`.
    static func forPathExtension(_ pathExtension: String) -> String {
        guard !pathExtension.isEmpty else { return MIMETypes.fallback }
        return MIMETypes.type(forExtension: pathExtension) ?? MIMETypes.fallback
    }
}
