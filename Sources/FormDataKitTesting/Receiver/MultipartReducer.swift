#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// Streams a `multipart/form-data` body and keeps what ``FormBodyParser`` needs to describe it,
/// in bounded memory: delimiters, part headers and field values as they came, and the content of
/// a file part only while it is at most `inlineLimit` bytes. A larger file part is counted and
/// hashed as it streams by and kept empty; ``patch(_:)`` then gives the parsed file its real size
/// and SHA-256. So a 100 MiB upload costs the receiver a hash, not 100 MiB.
///
/// The body is scanned for the delimiter `CRLF--boundary` with a window of the delimiter's
/// length; a body that starts with `--boundary` is scanned as if a CRLF came first. When a part's
/// headers grow past 64 KiB, reducing stops and the rest is kept as it came (the parser then
/// reports what is wrong with it).
struct MultipartReducer {
    /// A file part's content as it streamed by.
    private struct File {
        var size = 0
        var hash = SHA256()
        /// The content while it is at most `inlineLimit` bytes; nil once it is over.
        var kept: Data? = Data()
    }

    private enum State {
        /// Before the first delimiter (a preamble), or after the closing one (an epilogue).
        case outside
        /// After a delimiter: the part's header block, up to its empty line.
        case headers
        /// A part's content; `file` when it has a `filename`.
        case content(File?)
        /// Passing bytes through unchanged (after the closing delimiter, or when the headers ran
        /// over their bound).
        case verbatim
    }

    private let delimiter: [UInt8]
    private let inlineLimit: Int
    private var state = State.outside
    /// Bytes received and not yet worked through: `window[start...]`.
    private var window: [UInt8] = Array("\r\n".utf8)
    private var start = 0
    /// The bytes of the CRLF the scan pretends came first, still to be dropped from the output.
    private var virtualPrefix = 2
    /// What the parser gets.
    private(set) var reduced = Data()
    /// Size and SHA-256 of each file part in body order; `reduced` when its content is not in
    /// ``reduced``.
    private(set) var files: [(size: Int, sha256: String, reduced: Bool)] = []

    init(boundary: String, inlineLimit: Int) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        self.inlineLimit = inlineLimit
    }

    /// Whether any file's content was left out of ``reduced``.
    var reducedAny: Bool { files.contains { $0.reduced } }

    /// About the bytes it holds: the reduced body and the window it searches.
    var heldBytes: Int { reduced.count + window.count }

    /// Adds the next bytes of the body.
    mutating func feed(_ bytes: Data) {
        if start > 0 {
            window.removeFirst(start)
            start = 0
        }
        window.append(contentsOf: bytes)
        var progress = true
        while progress { progress = step(final: false) }
    }

    /// The body is complete: whatever is left is kept as it is.
    mutating func finish() {
        while step(final: true) {}
        if case .content(let file?) = state { endFile(file) }
        emit(window[start...])
        window.removeAll()
        start = 0
        state = .verbatim
    }

    /// Works through the window as far as it can; whether it should be called again.
    private mutating func step(final: Bool) -> Bool {
        let left = window.count - start
        switch state {
        case .verbatim:
            emit(window[start...])
            start = window.count
            return false
        case .outside, .content:
            if let at = find(delimiter, from: start) {
                consume(window[start..<at])
                if case .content(let file?) = state { endFile(file) }
                emit(window[at..<(at + delimiter.count)])
                start = at + delimiter.count
                state = .headers
                return true
            }
            // No delimiter yet: all but a possible delimiter's beginning is content.
            let safe = final ? window.count : max(start, window.count - (delimiter.count - 1))
            consume(window[start..<safe])
            start = safe
            return false
        case .headers:
            if left >= 2, window[start] == UInt8(ascii: "-"), window[start + 1] == UInt8(ascii: "-") {
                state = .verbatim  // the closing delimiter: the epilogue follows
                return true
            }
            guard let end = find(Self.emptyLine, from: start) else {
                if left > 64 << 10 { state = .verbatim }
                return left > 64 << 10
            }
            let block = String(decoding: window[start..<end], as: UTF8.self)
            emit(window[start..<(end + 4)])
            start = end + 4
            state = .content(Self.isFile(block) ? File() : nil)
            return true
        }
    }

    private static let emptyLine = Array("\r\n\r\n".utf8)

    /// Content bytes of the current part (or of the preamble).
    private mutating func consume(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        guard case .content(var file?) = state else {
            emit(bytes)
            return
        }
        file.size += bytes.count
        file.hash.update(Data(bytes))
        if file.kept != nil {
            if file.kept!.count + bytes.count > inlineLimit {
                file.kept = nil
            } else {
                file.kept!.append(contentsOf: bytes)
            }
        }
        state = .content(file)
    }

    private mutating func endFile(_ file: File) {
        if let kept = file.kept { emit(kept[...]) }
        files.append((file.size, file.hash.hexDigest, file.kept == nil))
    }

    private mutating func emit<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        var bytes = bytes[...]
        if virtualPrefix > 0 {
            let skip = min(virtualPrefix, bytes.count)
            bytes = bytes.dropFirst(skip)
            virtualPrefix -= skip
        }
        reduced.append(contentsOf: bytes)
    }

    /// Whether a part's header block gives it a `filename` (FormBodyParser's test for a file).
    private static func isFile(_ block: String) -> Bool {
        block.components(separatedBy: "\r\n").contains { line in
            guard let colon = line.firstIndex(of: ":"),
                line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == "content-disposition"
            else { return false }
            return FormBodyParser.parameter("filename", in: String(line[line.index(after: colon)...])) != nil
        }
    }

    /// The parsed `form` of ``reduced`` with the real size and SHA-256 of each file whose
    /// content was left out; nil when its files do not line up with the parts streamed (then
    /// the caller reports the body as not parsed).
    func patch(_ form: ParsedForm) -> ParsedForm? {
        guard form.files.count == files.count else { return nil }
        var form = form
        for index in files.indices where files[index].reduced {
            guard form.files[index].data.isEmpty else { return nil }
            form.files[index].size = files[index].size
            form.files[index].sha256 = files[index].sha256
        }
        return form
    }

    /// The offset in `window` of the first `needle` at or after `from` (memchr for its first
    /// byte, then a comparison).
    private func find(_ needle: [UInt8], from: Int) -> Int? {
        window.withUnsafeBytes { (haystack: UnsafeRawBufferPointer) -> Int? in
            guard let base = haystack.baseAddress, let first = needle.first else { return nil }
            var offset = from
            while haystack.count - offset >= needle.count {
                guard let hit = memchr(base + offset, Int32(first), haystack.count - offset - needle.count + 1) else { return nil }
                let at = base.distance(to: UnsafeRawPointer(hit))
                if needle.withUnsafeBytes({ memcmp(base + at, $0.baseAddress!, needle.count) }) == 0 { return at }
                offset = at + 1
            }
            return nil
        }
    }
}

/// What the receiver keeps of a body to parse it, up to its keep limit: a URL-encoded body
/// whole, a multipart body through a ``MultipartReducer`` (file contents over `inlineLimit` are
/// hashed, not kept), any other body not at all (it is not a form: the parser only names its
/// type).
struct KeptBody {
    /// Whether the whole body went in within the limit (nothing was dropped).
    private(set) var complete: Bool
    /// Whether the body is of a type the parser does not read (nothing is kept).
    let notAForm: Bool
    private let limit: Int
    private var total = 0
    private var whole = Data()
    private var reducer: MultipartReducer?

    init(keep: Bool, contentType: String?, limit: Int, inlineLimit: Int) {
        complete = keep
        self.limit = limit
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        notAForm = mediaType != "multipart/form-data" && mediaType != "application/x-www-form-urlencoded"
        if mediaType == "multipart/form-data", let contentType,
            let boundary = FormBodyParser.parameter("boundary", in: contentType), !boundary.isEmpty
        {
            reducer = MultipartReducer(boundary: boundary, inlineLimit: inlineLimit)
        }
    }

    /// Adds the next bytes of the (inflated) body.
    mutating func append(_ piece: Data) {
        guard complete else { return }
        total += piece.count
        guard total <= limit else { return drop() }
        if notAForm { return }
        if reducer != nil {
            reducer!.feed(piece)
        } else {
            whole.append(piece)
        }
    }

    /// Keeps nothing more: the body will not be parsed.
    mutating func drop() {
        complete = false
        whole = Data()
        reducer = nil
    }

    /// The bytes it holds now (what ``ReceiverBufferBudget`` counts).
    var heldBytes: Int { whole.count + (reducer?.heldBytes ?? 0) }

    /// Whether file contents were left out (the parser's view of sizes and offsets differs).
    var reduced: Bool { reducer?.reducedAny ?? false }

    /// What the parser gets (once, at the end of the body).
    mutating func finish() -> Data {
        guard reducer != nil else { return whole }
        reducer!.finish()
        return reducer!.reduced
    }

    /// `form`, parsed from ``finish()``, with the real size and SHA-256 of the files left out.
    func patch(_ form: ParsedForm) -> ParsedForm? {
        reducer.map { $0.patch(form) } ?? form
    }
}
