import FormDataKitBody
import FormDataKitWire
import Foundation

/// A small body held in memory, copied into memory the curl transport owns and handed to libcurl
/// as `CURLOPT_POSTFIELDS`: libcurl sends it from there (with the head, in one write, up to
/// 64 KiB) and rewinds it itself for a re-send; no read callback, no read-ahead. (A body with
/// file parts is read by ``BodyReadAhead``: its files are never read here.)
///
/// The memory comes from (and goes back to) ``ReadAheadMemory/shared``: a fresh allocation per
/// small send grew and shrank the heap each time (`brk`, and page faults zeroing every page).
final class CurlBodyBytes: @unchecked Sendable {
    // `@unchecked`: the memory is written once, in init, and only read afterwards.
    private let memory: UnsafeMutableRawPointer
    private let capacity: Int
    /// The body's length in bytes.
    let count: Int

    /// The body's first byte (valid while this object lives).
    var baseAddress: UnsafeRawPointer { UnsafeRawPointer(memory) }

    /// A copy of `source`, or nil unless every segment is in memory.
    init?(copying source: BodySource) {
        guard source.isInMemory else { return nil }
        count = Int(clamping: source.length)
        (memory, capacity) = ReadAheadMemory.shared.take(byteCount: count)
        var filled = 0
        for segment in source.segments {
            guard case .bytes(let data) = segment.content else { continue }
            data.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { (memory + filled).copyMemory(from: base, byteCount: bytes.count) }
            }
            filled += data.count
        }
    }

    deinit { ReadAheadMemory.shared.give(memory, capacity: capacity) }
}
