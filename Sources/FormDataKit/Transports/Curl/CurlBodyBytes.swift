import Foundation

/// A small body read whole into memory the curl transport owns, handed to libcurl as
/// `CURLOPT_POSTFIELDS`: libcurl sends it from there (with the head, in one write, up to
/// 64 KiB) and rewinds it itself for a re-send; no read callback, no read-ahead.
///
/// A body with file parts is read on the ``BodyReaderPool`` (never on the transport's thread);
/// a body already in memory is copied where the transfer is set up.
final class CurlBodyBytes: @unchecked Sendable {
    // `@unchecked`: the memory is written once, in init, and only read afterwards.
    private let memory: UnsafeMutableRawPointer
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
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: count + 1, alignment: 16)
        let reader = source.makeReader(chunkSize: count + 1)
        var filled = 0
        do throws(FormDataError) {
            while filled <= count {
                let got = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled...]))
                guard got > 0 else { break }
                filled += got
            }
        } catch {
            bytes.deallocate()
            throw error
        }
        memory = bytes.baseAddress!
        self.count = min(filled, count)
    }

    deinit { memory.deallocate() }
}
