import FormDataKitWire
import CZlib
import Foundation

/// A raw-deflate compressor for independent ``GzipBlock``s, one per worker thread.
///
/// Each block is deflated on its own (raw deflate, windowBits -15, so no wrapper) after
/// `deflateReset`, primed with the block's dictionary via `deflateSetDictionary`, and ended with
/// `Z_SYNC_FLUSH` (an empty stored block that byte-aligns the output, so blocks can simply be
/// joined) — or `Z_FINISH` for the last block, which sets the final-block bit. One `z_stream`
/// per level used, made on first use and reset for every block. Every zlib return code is
/// checked; a failure is ``FormDataError/compressionFailed(code:message:)``.
final class GzipBlockDeflater {
    /// `windowBits` for raw deflate with a 32 KiB window.
    static let rawWindowBits: Int32 = -15

    private var streams: [Int32: UnsafeMutablePointer<z_stream>] = [:]

    /// A deflater with no streams yet.
    init() {}

    deinit {
        for stream in streams.values {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
    }

    /// Compresses `block`'s input into its output and computes its CRC-32.
    func compress(_ block: GzipBlock) throws(FormDataError) {
        let stream = try self.stream(level: block.level)
        try check(deflateReset(stream), stream)
        let base = block.input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        if block.dictionaryCount > 0 {
            try check(deflateSetDictionary(stream, base, uInt(block.dictionaryCount)), stream)
        }
        let data = base + block.dictionaryCount
        block.crc = crc32(0, data, uInt(block.count))
        stream.pointee.next_in = data
        stream.pointee.avail_in = uInt(block.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        // Room for the worst case plus the flush marker, so one call normally does it all.
        block.reserveOutput(Int(deflateBound(stream, uLong(block.count))) + 64)
        block.outputCount = 0
        let flush = block.isLast ? Z_FINISH : Z_SYNC_FLUSH
        while true {
            let room = block.output.count - block.outputCount
            stream.pointee.next_out = (block.output.baseAddress! + block.outputCount).assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(room)
            stream.pointee.msg = nil  // zlib never clears it; keep error texts current
            let code = deflate(stream, flush)
            let produced = room - Int(stream.pointee.avail_out)
            block.outputCount += produced
            switch code {
            case Z_STREAM_END:
                return
            case Z_OK:
                break
            case Z_BUF_ERROR where flush == Z_SYNC_FLUSH && produced == 0 && stream.pointee.avail_in == 0:
                // Nothing left to do: the flush completed exactly at the end of the last buffer.
                return
            default:
                throw .compressionFailed(code: code, message: ZlibSupport.message(code, stream: stream))
            }
            if flush == Z_SYNC_FLUSH && stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return }
            if stream.pointee.avail_out == 0 { block.reserveOutput(block.output.count * 2) }
        }
    }

    /// The stream for `level`, made on first use.
    private func stream(level: Int32) throws(FormDataError) -> UnsafeMutablePointer<z_stream> {
        if let stream = streams[level] { return stream }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = czlib_deflateInit2(stream, level, Z_DEFLATED, Self.rawWindowBits, ZlibSupport.memLevel, Z_DEFAULT_STRATEGY)
        guard code == Z_OK else {
            let message = ZlibSupport.message(code, stream: stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .compressionFailed(code: code, message: message)
        }
        streams[level] = stream
        return stream
    }

    private func check(_ code: Int32, _ stream: UnsafeMutablePointer<z_stream>) throws(FormDataError) {
        guard code == Z_OK else {
            throw .compressionFailed(code: code, message: ZlibSupport.message(code, stream: stream))
        }
    }
}
