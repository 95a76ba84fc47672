import Foundation

/// A byte range of a file that a body includes, read only when the body is read.
public struct FileRange: Sendable, Equatable {
    /// The file's path.
    public let path: String
    /// Where the range starts in the file.
    public let offset: UInt64
    /// How many bytes the range covers.
    public let length: UInt64
    /// The file's whole size when the body length was computed. A file of any other size at read
    /// time is ``FormDataError/fileChanged(path:expectedSize:actualSize:)``.
    public let expectedFileSize: UInt64

    /// A range of `length` bytes from `offset` of the file at `path`, whose size is `expectedFileSize`.
    /// - Parameters:
    ///   - path: the file's path.
    ///   - offset: where the range starts in the file (0: the start).
    ///   - length: how many bytes the range covers.
    ///   - expectedFileSize: the file's whole size now; another size when the body is read is an error.
    public init(path: String, offset: UInt64 = 0, length: UInt64, expectedFileSize: UInt64) {
        self.path = path
        self.offset = offset
        self.length = length
        self.expectedFileSize = expectedFileSize
    }
}

/// One piece of a body: literal bytes, a byte range of a file, or a stream.
public struct BodySegment: Sendable, Equatable {
    /// Where a segment's bytes come from.
    public enum Content: Sendable, Equatable {
        /// Bytes held in memory.
        case bytes(Data)
        /// Bytes read from a file when the body is read.
        case file(FileRange)
        /// Bytes a stream gives when the body is read (``StreamedContent``).
        case stream(StreamedContent)
    }

    /// The segment's bytes, or where to read them.
    public let content: Content
    /// The content type of the form part whose content this segment is, or nil for structure
    /// (boundaries, part headers, url-encoded text). Compression uses it to skip deflating
    /// content that is already compressed.
    public let partContentType: String?

    /// A segment of `content`, the content of a part typed `partContentType` (nil for structure).
    /// - Parameters:
    ///   - content: the bytes, or the file range to read.
    ///   - partContentType: the `Content-Type` of the form part this is the content of; nil for
    ///     structure (boundaries, part headers, URL-encoded text).
    public init(_ content: Content, partContentType: String? = nil) {
        self.content = content
        self.partContentType = partContentType
    }

    /// The number of bytes the segment contributes (0 for a stream of unknown length).
    public var length: UInt64 {
        switch content {
        case .bytes(let data): return UInt64(data.count)
        case .file(let range): return range.length
        case .stream(let stream): return stream.declaredLength ?? 0
        }
    }

    /// The stream the segment reads, if it is one.
    public var stream: StreamedContent? {
        if case .stream(let stream) = content { return stream }
        return nil
    }
}

/// An encoded body: an ordered list of segments whose total length is known before a byte is
/// read — unless a stream of unknown length is among them (``knownLength`` is nil then).
///
/// Built by the URL-encoded and multipart encoders; read with `BodyReader` (bounded memory),
/// collected into `Data` with `readAll()`, or spooled to a file by the storage layer.
public struct BodySource: Sendable, Equatable {
    /// The segments, in body order.
    public let segments: [BodySegment]
    /// The exact number of bytes the body has when ``knownLength`` is not nil; otherwise the
    /// bytes of its segments other than the streams of unknown length (a lower bound).
    public let length: UInt64
    /// Whether every segment's length is known (no stream of unknown length).
    public let isLengthKnown: Bool

    /// A body made of `segments`.
    /// - Parameter segments: the segments, in body order; the length is their sum.
    public init(segments: [BodySegment]) {
        self.segments = segments
        self.length = segments.reduce(0) { $0 + $1.length }
        self.isLengthKnown = segments.allSatisfy { $0.stream.map { $0.declaredLength != nil } ?? true }
    }

    /// The exact number of bytes the body has, or nil when a stream's length is unknown.
    public var knownLength: UInt64? { isLengthKnown ? length : nil }

    /// The streams the body reads, in order.
    public var streams: [StreamedContent] { segments.compactMap(\.stream) }

    /// Whether the body has no bytes at all (no segment gives any).
    public var isEmpty: Bool { isLengthKnown && length == 0 }

    /// Whether the body can be read again for another attempt: every stream has a factory.
    public var isReplayable: Bool { streams.allSatisfy(\.isReplayable) }

    /// An empty body.
    public static let empty = BodySource(segments: [])

    /// Where byte `offset` of the body falls: the segment (past the ones before it; a segment the
    /// offset starts stays, even an empty file) and the offset within it. An offset at or past
    /// the end gives the segment count (or the last empty segment) and what is left over.
    func position(of offset: UInt64) -> (segment: Int, offsetInSegment: UInt64) {
        var skip = min(offset, length)
        var index = 0
        while index < segments.count, skip > 0, skip >= segments[index].length {
            skip -= segments[index].length
            index += 1
        }
        return (index, skip)
    }

    /// The source from byte `offset` on (``position(of:)``): the segments before it dropped, the
    /// one it falls in cut (a file range starts later in its file), every later one kept — an
    /// empty file's too, so a read from an offset checks its size as a read from the start does.
    package func suffix(from offset: UInt64) -> BodySource {
        let (index, skip) = position(of: offset)
        guard index < segments.count else { return .empty }
        var rest = Array(segments[index...])
        if skip > 0 {
            let segment = rest[0]
            switch segment.content {
            case .bytes(let data):
                let start = data.startIndex + Int(skip)
                rest[0] = BodySegment(.bytes(data.subdata(in: start..<data.endIndex)), partContentType: segment.partContentType)
            case .file(let range):
                let cut = FileRange(
                    path: range.path, offset: range.offset + skip, length: range.length - skip, expectedFileSize: range.expectedFileSize)
                rest[0] = BodySegment(.file(cut), partContentType: segment.partContentType)
            case .stream:
                // Not cut: a reader refuses an offset in a body with streams (the body reader).
                break
            }
        }
        return BodySource(segments: rest)
    }

    /// Whether every segment is in memory (no file is read).
    public var isInMemory: Bool {
        segments.allSatisfy { if case .bytes = $0.content { return true } else { return false } }
    }
}
