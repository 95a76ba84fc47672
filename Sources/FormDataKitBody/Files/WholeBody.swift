import FormDataKitWire
import Foundation

/// A small body read whole into memory: the body reader's one small-body fast path
/// (``BodyReadAhead/readWhole(_:files:pool:completion:)``), which the curl transport hands to
/// libcurl as `CURLOPT_POSTFIELDS` (libcurl sends it from there, with the head in one write up to
/// 64 KiB, and rewinds it itself for a re-send: no read callback, no pause and resume).
///
/// Its files are read as a read-ahead reads them (``OpenedFileRange``: exact length, each
/// file's size checked before its last bytes count), on the ``BodyReaderPool``. The memory comes
/// from (and goes back to) ``ReadAheadMemory/shared``: a fresh allocation per small send grew and
/// shrank the heap each time (`brk`, and page faults zeroing every page: a quarter of a 100 KiB
/// send's CPU).
package final class WholeBody: @unchecked Sendable {
    // `@unchecked`: the memory is written once, in init, and only read afterwards.
    private let memory: UnsafeMutableRawPointer
    private let capacity: Int
    /// The body's length in bytes.
    package let count: Int

    /// The body's first byte (valid while this object lives).
    package var baseAddress: UnsafeRawPointer { UnsafeRawPointer(memory) }

    /// Reads all of `source`, its files opened and closed by `files`: call it on the reader pool
    /// for a body with file parts (a body in memory may be copied anywhere).
    /// - Throws: what reading a file part throws (``FormDataError/fileChanged(path:expectedSize:actualSize:)``
    ///   and the other file errors).
    package init(reading source: BodySource, files: any FileOpening = SystemFileOpening()) throws(FormDataError) {
        let count = Int(clamping: source.length)
        // One byte more than the body: the last read, which finds the end, still visits (and
        // checks) every segment left, an empty file's included.
        let (start, capacity) = ReadAheadMemory.shared.take(byteCount: count + 1)
        let bytes = UnsafeMutableRawBufferPointer(start: start, count: count + 1)
        let reader = source.makeReader(chunkSize: count + 1, files: files)
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

    deinit { ReadAheadMemory.shared.give(memory, capacity: capacity) }
}

extension BodyReadAhead {
    /// Reads all of `source` on `pool` (its files opened and closed there by `files`), then calls
    /// `completion` with it, on the worker: the small-body fast path.
    package static func readWhole(
        _ source: BodySource, files: any FileOpening, pool: BodyReaderPool = .shared,
        completion: @escaping @Sendable (Result<WholeBody, FormDataError>) -> Void
    ) {
        pool.submit {
            let result: Result<WholeBody, FormDataError>
            do throws(FormDataError) { result = .success(try WholeBody(reading: source, files: files)) } catch { result = .failure(error) }
            completion(result)
        }
    }
}
