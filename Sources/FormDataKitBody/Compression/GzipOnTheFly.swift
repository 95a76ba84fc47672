import FormDataKitWire
import Foundation

/// Gzip over a body with streams, compressed as it is read: the body's gzip becomes one stream
/// segment of unknown length (sent chunked), read by the one body reader like any stream — on
/// its workers, a chunk at a time (nothing is spooled, memory stays bounded). Replayable when
/// the body is: each attempt compresses it anew from its start.
package enum GzipOnTheFly {
    /// `source` gzip-compressed at `level` while it is read.
    /// - Parameters:
    ///   - source: the body (with streams: a body without is compressed ahead, ``BodyCompressor``).
    ///   - level: the deflate level (-1 or 0...9).
    /// - Returns: a body of one stream segment: the gzip of `source`.
    package static func body(of source: BodySource, level: Int32) -> BodySource {
        let field = source.streams.first?.field ?? "body"
        let stream = StreamedContent(field: field, replayable: source.isReplayable) {
            let reader = GzipPullReader(source.makeReader(chunkSize: GzipPullReader.inputSize), level: level)
            return .reader { (buffer) throws(FormDataError) in try reader.read(into: buffer) }
        }
        return BodySource(segments: [BodySegment(.stream(stream))])
    }
}

/// Reads a body through a ``GzipDeflater``: each read compresses the body's next chunk when the
/// output of the last one was handed on (at most one chunk's output held).
final class GzipPullReader {
    static let inputSize = 64 << 10
    private let reader: BodyReader
    private let level: Int32
    private var deflater: GzipDeflater?
    private let input = UnsafeMutableRawBufferPointer.allocate(byteCount: inputSize, alignment: 16)
    private var pending = Data()
    private var offset = 0
    private var finished = false

    init(_ reader: BodyReader, level: Int32) {
        self.reader = reader
        self.level = level
    }

    deinit { input.deallocate() }

    /// Copies the next compressed bytes into `buffer`; 0 at the end of the gzip stream.
    /// - Throws: what reading the body or compressing throws.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormDataError) -> Int {
        while offset == pending.count {
            if finished { return 0 }
            pending.removeAll(keepingCapacity: true)
            offset = 0
            if deflater == nil { deflater = try GzipDeflater(level: level, outputCapacity: Self.inputSize) }
            let got = try reader.read(into: input)
            if got == 0 {
                try deflater!.finish { (piece) throws(FormDataError) in pending.append(contentsOf: piece) }
                finished = true
            } else {
                try deflater!.compress(UnsafeRawBufferPointer(rebasing: input[0..<got])) { (piece) throws(FormDataError) in
                    pending.append(contentsOf: piece)
                }
            }
        }
        let count = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
        offset += count
        return count
    }
}
