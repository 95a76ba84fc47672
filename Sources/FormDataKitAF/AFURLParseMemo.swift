import FormDataKitWire
import Foundation

/// The last URL string parsed with `NSURL` and what it gave, so a form sent again and again to
/// one endpoint is parsed once: corelibs Foundation's `NSURL` parser costs about a fifth of
/// building and sending a small form. The result is exactly what the parse gives (nil included).
final class AFURLParseMemo: Sendable {
    private let last = Locked<(string: String, base: URL?, url: URL?)?>(nil)

    /// `NSURL(string: string, relativeTo: base)`, as a URL.
    func url(_ string: String, relativeTo base: URL? = nil) -> URL? {
        if let hit = last.current, hit.string == string, hit.base == base { return hit.url }
        let url = NSURL(string: string, relativeTo: base).map { $0 as URL }
        last.withLock { $0 = (string, base, url) }
        return url
    }
}
