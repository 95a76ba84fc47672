import FormDataKitBody
import FormDataKitWire
import Foundation

/// A small body read whole into memory the curl transport owns, handed to libcurl as
/// `CURLOPT_POSTFIELDS`: libcurl sends it from there (with the head, in one write, up to
/// 64 KiB) and rewinds it itself for a re-send; no read callback, no read-ahead.
///
/// A body with file parts is read on the ``BodyReaderPool`` (never on the transport's thread);
/// a body already in memory is copied where the transfer is set up. The memory comes from (and
/// goes back to) ``ReadAheadMemory/shared``: a fresh allocation per small send grew and shrank
/// the heap each time (`brk`, and page faults zeroing every page: a quarter of a 100 KiB send's CPU).
final class CurlBodyBytes: @unchecked Sendable {
    // `@unchecked`: the memory is written once, in init, and only read afterwards.
    private let memory: UnsafeMutableRawPointer
    private let capacity: Int
    /// The body's length in bytes.
    let count: Int

    /// The body's first byte (valid while this object lives).
    var baseAddress: UnsafeRawPointer { UnsafeRawPointer(memory) }

    /// Reads all of `source` (its files included: never call this on the transport's thread
    /// for a body with file parts).
    /// - Throws: what reading a file part throws (``FormDataError/fileChanged(path:expectedSize:actualSize:)``
    ///   and the other file errors).
    init(reading source: BodySource) throws(FormDataError) {
        let count = Int(clamping: source.length)
        // One byte more than the body: the last read, which finds the end, still visits (and
        // checks) every segment left, an empty file's included.
        let (start, capacity) = ReadAheadMemory.shared.take(byteCount: count + 1)
        let bytes = UnsafeMutableRawBufferPointer(start: start, count: count + 1)
        let reader = source.makeReader(chunkSize: count + 1)
        var filled = 0
        do throws(FormDataError) {
            while filled <= count {
                let got = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled...]))
                guard got > 0 else { break }
                filled += got
            }
        } catch {
            ReadAheadMemory.shared.give(start, capacity: capacity)
            throw error
        }
        memory = start
        self.capacity = capacity
        self.count = min(filled, count)
    }

    private init(memory: UnsafeMutableRawPointer, capacity: Int, count: Int) {
        self.memory = memory
        self.capacity = capacity
        self.count = count
    }

    /// All of `source` read on the calling thread, or nil unless every file part is read at once
    /// from what the system holds in memory (``OpenedFileRange/readRestWithoutWaiting(into:)``)
    /// and found unchanged. Nil also on any file error: the reader pool's read reports it, as
    /// it always has. Call only on a thread that may touch the files (``BodyBuildingThread``).
    static func readWithoutWaiting(_ source: BodySource) -> CurlBodyBytes? {
        // The test seam stands for a file system whose opens of its paths wait.
        if let seam = OpenedFileRange.openSeam.current, source.segments.contains(where: { seam.blocks($0.filePath ?? "") }) {
            return nil
        }
        let count = Int(clamping: source.length)
        // One byte more than the body: a file part's read asks one byte past its file's end.
        let (memory, capacity) = ReadAheadMemory.shared.take(byteCount: count + 1)
        if readEverySegmentWithoutWaiting(of: source, into: memory, count: count) {
            return CurlBodyBytes(memory: memory, capacity: capacity, count: count)
        }
        ReadAheadMemory.shared.give(memory, capacity: capacity)
        return nil
    }

    /// Whether all `count` bytes of `source` were copied into `memory`, none of its files waited for.
    private static func readEverySegmentWithoutWaiting(of source: BodySource, into memory: UnsafeMutableRawPointer, count: Int) -> Bool {
        var filled = 0
        for segment in source.segments {
            let length = Int(clamping: segment.length)
            guard length <= count - filled else { return false }
            switch segment.content {
            case .bytes(let data):
                data.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress { (memory + filled).copyMemory(from: base, byteCount: length) }
                }
            case .file(let range):
                guard let file = try? OpenedFileRange(range), (try? file.readRestWithoutWaiting(into: memory + filled)) == true else {
                    return false
                }
            }
            filled += length
        }
        return filled == count
    }

    deinit { ReadAheadMemory.shared.give(memory, capacity: capacity) }
}

extension BodySegment {
    /// The path of a file segment (nil for bytes).
    fileprivate var filePath: String? {
        if case .file(let range) = content { return range.path }
        return nil
    }
}
