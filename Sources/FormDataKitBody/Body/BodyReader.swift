import FormDataKitWire
import Foundation

/// Reads a `BodySource` in order into a caller's buffer, with bounded memory: in-memory
/// segments are copied, file ranges are read from disk and checked for size changes, streams
/// are read (blocking until they have bytes) and their declared lengths checked.
///
/// One chunk never spans two segments, so ``segmentIndex`` tells which segment the last chunk
/// came from (compression uses it to switch levels between parts). Not thread-safe; use one
/// reader per task.
public final class BodyReader {
    /// The default read size for file ranges: 1 MiB.
    public static let defaultChunkSize = 1 << 20

    /// The body being read.
    public let source: BodySource
    /// The index of the segment the last chunk came from.
    public private(set) var segmentIndex = 0
    /// Bytes returned so far.
    public private(set) var bytesRead: UInt64 = 0
    /// Whether the last chunk came from a stream (what it had then: a reader hands it on
    /// rather than wait for more).
    public private(set) var lastChunkFromStream = false

    private let chunkSize: Int
    private var offsetInSegment = 0
    private var openFile: OpenedFileRange?
    private var openStream: StreamSegmentReader?
    /// What the first read throws (a reader that cannot start where it was asked to).
    private var failure: FormDataError?
    private var started = false
    private let files: any FileOpening
    /// Whether files whose ranges are read stay open until ``takeFinishedFiles()`` (a read-ahead
    /// closes them only after it handed their bytes on: a close may wait).
    private let keepsFinishedFiles: Bool
    private var finishedFiles: [OpenedFileRange] = []

    init(source: BodySource, chunkSize: Int, files: any FileOpening, keepsFinishedFiles: Bool = false, failure: FormDataError? = nil) {
        self.source = source
        self.failure = failure
        self.chunkSize = max(1, chunkSize)
        self.files = files
        self.keepsFinishedFiles = keepsFinishedFiles
    }

    /// The files read to their end and kept open since the last call (see `keepsFinishedFiles`).
    func takeFinishedFiles() -> [OpenedFileRange] {
        defer { finishedFiles = [] }
        return finishedFiles
    }

    /// How many files are kept open, read to their end.
    var finishedFileCount: Int { finishedFiles.count }

    /// Whether every byte has been read (for a body of known length; see `BodySource.knownLength`).
    public var isAtEnd: Bool { bytesRead == source.knownLength }

    /// Copies up to `buffer.count` bytes of the next chunk into `buffer` and returns how many;
    /// 0 at the end of the body.
    /// - Parameter buffer: where the bytes go; a chunk never spans two segments, nor is a file read
    ///   in pieces larger than the reader's chunk size.
    /// - Returns: the number of bytes copied; 0 only at the end of the body.
    /// - Throws: `FormDataError.fileChanged(path:expectedSize:actualSize:)` when a file is not the
    ///   size recorded when the body was built, or the file errors of opening and reading it.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int {
        guard buffer.count > 0 else { return 0 }
        if let failure { throw failure }
        lastChunkFromStream = false
        var index = started ? segmentIndex : 0
        started = true
        while index < source.segments.count {
            let segment = source.segments[index]
            switch segment.content {
            case .bytes(let data):
                if offsetInSegment < data.count {
                    let count = min(buffer.count, data.count - offsetInSegment)
                    data.withUnsafeBytes { bytes in
                        buffer.baseAddress!.copyMemory(
                            from: bytes.baseAddress! + offsetInSegment, byteCount: count)
                    }
                    offsetInSegment += count
                    segmentIndex = index
                    bytesRead += UInt64(count)
                    return count
                }
            case .file(let range):
                if openFile == nil {
                    openFile = try OpenedFileRange(range, files: files)
                }
                if let file = openFile, file.remaining > 0 {
                    let limit = min(buffer.count, chunkSize)
                    let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<limit]))
                    segmentIndex = index
                    bytesRead += UInt64(got)
                    return got
                }
            case .stream(let stream):
                if openStream == nil { openStream = try StreamSegmentReader(stream) }
                let limit = min(buffer.count, chunkSize)
                let got = try openStream!.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<limit]))
                if got > 0 {
                    segmentIndex = index
                    bytesRead += UInt64(got)
                    lastChunkFromStream = true
                    return got
                }
                openStream = nil
            }
            if keepsFinishedFiles, let openFile { finishedFiles.append(openFile) }
            openFile = nil
            offsetInSegment = 0
            index += 1
            segmentIndex = index
        }
        return 0
    }
}
