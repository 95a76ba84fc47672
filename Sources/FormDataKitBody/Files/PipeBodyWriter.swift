#if os(Linux)
import FormDataKitWire
import Foundation
import Glibc

/// Writes one body into a pipe, in order, from a given offset: the worker's side of a
/// ``PipeReadAhead``. Bytes go in with `write`, file ranges with `splice` (or, where a file
/// cannot be spliced, a read and a write).
///
/// The body's last byte is held back. The pipe carries the file's own pages, so a file cut short
/// after its range went into the pipe could still change what is sent; ``finish(into:)``, called
/// once the consumer has read everything else, checks every file's size once more and only then
/// writes that byte. A file that changed size by then is an error before the body is complete:
/// never a wrong body on the wire. The files stay open until then (their number is bounded by
/// ``PipeReadAhead``).
struct PipeBodyWriter {
    /// Why ``write(into:capacity:publish:)`` stopped.
    enum Outcome {
        /// The pipe is full.
        case pipeFull
        /// A pipe's worth moved: the caller queues the next fill, so bodies take turns.
        case yielded
        /// `publish` said the read-ahead was restarted or cancelled.
        case stale
        /// Everything but the last byte is in the pipe: call ``finish(into:)`` once it is read.
        case heldLastByte
        /// Nothing more to write (an empty rest of the body).
        case done
    }

    private let source: BodySource
    private var segment: Int
    private var offsetInSegment: UInt64
    /// The body offset of the next byte to write.
    private var offset: UInt64
    private var file: OpenedFileRange?
    /// Whether file ranges are spliced; false (or a file system that cannot) reads them into
    /// `pending` and writes them from there.
    private let splices: Bool
    /// A piece read from a file that is not spliced (made on first use), and the part of it not
    /// yet written.
    private var pending: Piece?
    private var pendingRange = 0..<0

    /// 64 KiB to read a file into, from the read-aheads' memory store (``ReadAheadMemory``),
    /// given back with the last writer that holds it.
    private final class Piece {
        let bytes: UnsafeMutableRawBufferPointer
        private let capacity: Int
        init() {
            let (memory, capacity) = ReadAheadMemory.shared.take(byteCount: 64 << 10)
            (bytes, self.capacity) = (UnsafeMutableRawBufferPointer(start: memory, count: 64 << 10), capacity)
        }
        deinit { ReadAheadMemory.shared.give(bytes.baseAddress!, capacity: capacity) }
    }
    /// Every file opened, kept for the last check.
    private var files: [OpenedFileRange] = []
    private var heldByte: UInt8?

    /// A writer of `source` from byte `offset` on; `splices: false` reads every file range and
    /// writes it, as on a file system that cannot splice.
    init(source: BodySource, from offset: UInt64, splices: Bool = true) {
        self.source = source
        self.splices = splices
        self.offset = min(offset, source.length)
        (segment, offsetInSegment) = source.position(of: offset)
    }

    /// Writes into the pipe `pipe` (of `capacity` bytes) until it is full, a pipe's worth has
    /// moved, or all but the body's last byte is in; `publish` counts each write (false: stop).
    mutating func write(into pipe: Int32, capacity: Int, publish: (Int) -> Bool) throws(FormDataError) -> Outcome {
        let segments = source.segments
        let end = source.length
        var moved = 0
        while segment < segments.count {
            if moved >= capacity { return .yielded }
            let length = segments[segment].length
            if case .file(let range) = segments[segment].content, file == nil {
                let opened = try OpenedFileRange(range.cut(from: offsetInSegment))
                files.append(opened)
                file = opened
            }
            if offsetInSegment == length && pendingRange.isEmpty {
                nextSegment()
                continue
            }
            if offset + 1 == end && pendingRange.isEmpty {
                heldByte = try lastByte()
                offsetInSegment += 1
                offset += 1
                continue
            }
            // Up to the byte before the last.
            let allowed = Int(clamping: min(length - offsetInSegment, end > offset + 1 ? end - 1 - offset : 0))
            guard let count = try move(limit: min(allowed, capacity), into: pipe) else { return .pipeFull }
            guard count > 0 else { continue }
            offsetInSegment += UInt64(count)
            offset += UInt64(count)
            moved += count
            guard publish(count) else { return .stale }
        }
        return heldByte == nil ? .done : .heldLastByte
    }

    /// Checks every file's size once more, then writes the held last byte: the body is whole.
    /// - Throws: ``FormDataError/fileChanged(path:expectedSize:actualSize:)`` for a file whose
    ///   size changed, and the other file errors.
    func finish(into pipe: Int32) throws(FormDataError) {
        for file in files { try file.checkSize() }
        guard var byte = heldByte else { return }
        while Glibc.write(pipe, &byte, 1) < 0 {
            // The consumer has read everything else, so only a signal can stop this write.
            guard errno == EINTR else { throw .fileUnreadable(path: files.first?.range.path ?? "", errno: errno) }
        }
    }

    private mutating func nextSegment() {
        segment += 1
        offsetInSegment = 0
        file = nil
    }

    /// Moves up to `limit` bytes of the current segment into the pipe: the count (0: nothing
    /// written, go on), nil when the pipe is full.
    private mutating func move(limit: Int, into pipe: Int32) throws(FormDataError) -> Int? {
        switch source.segments[segment].content {
        case .bytes(let data):
            let start = Int(offsetInSegment)
            return try Self.write(pipe, path: files.last?.range.path) { write in
                data.withUnsafeBytes { write($0.baseAddress! + start, limit) }
            }
        case .file:
            guard let file else { return 0 }
            if let pending, !pendingRange.isEmpty {
                let count = try Self.write(pipe, path: file.range.path) { write in
                    write(pending.bytes.baseAddress! + pendingRange.lowerBound, pendingRange.count)
                }
                if let count { pendingRange = (pendingRange.lowerBound + count)..<pendingRange.upperBound }
                return count
            }
            if splices {
                switch try file.splice(into: pipe, limit: limit) {
                case .moved(let count): return count
                case .pipeFull: return nil
                case .unsupported: break
                }
            }
            // Read a piece the ordinary way; the next call writes it.
            let piece = pending ?? Piece()
            pending = piece
            pendingRange = 0..<(try file.read(into: UnsafeMutableRawBufferPointer(rebasing: piece.bytes[..<min(limit, piece.bytes.count)])))
            return 0
        }
    }

    /// A `write` to the pipe done by `body`: the count, nil when the pipe is full.
    private static func write(
        _ pipe: Int32, path: String?, _ body: ((UnsafeRawPointer, Int) -> Int) -> Int
    ) throws(FormDataError) -> Int? {
        while true {
            let result = body { Glibc.write(pipe, $0, $1) }
            if result >= 0 { return result }
            if errno == EINTR { continue }
            if errno == EAGAIN { return nil }
            throw .fileUnreadable(path: path ?? "", errno: errno)
        }
    }

    /// The body's last byte, from the current segment (a file's is read, which checks its size).
    private mutating func lastByte() throws(FormDataError) -> UInt8 {
        switch source.segments[segment].content {
        case .bytes(let data):
            return data[data.startIndex + Int(offsetInSegment)]
        case .file:
            guard let file else { throw .fileUnreadable(path: "", errno: EIO) }
            let byte = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
            defer { byte.deallocate() }
            guard try file.read(into: byte) == 1 else { throw .fileUnreadable(path: file.range.path, errno: EIO) }
            return byte[0]
        }
    }
}

extension FileRange {
    /// The part of this range from byte `skip` of it on.
    fileprivate func cut(from skip: UInt64) -> FileRange {
        FileRange(path: path, offset: offset + skip, length: length - skip, expectedFileSize: expectedFileSize)
    }
}
#endif
