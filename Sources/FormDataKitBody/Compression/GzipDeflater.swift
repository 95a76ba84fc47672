import FormDataKitWire
import CZlib
import Foundation

/// A streaming gzip compressor over the system zlib (deflate with the gzip wrapper: windowBits
/// 15 + 16, memLevel 8, default strategy — ASIHTTPRequest's settings).
///
/// Feed input with ``compress(_:into:)`` in chunks of any size, change the level between chunks
/// with ``setLevel(_:into:)``, and end with ``finish(into:)``; compressed bytes go to the sink in
/// pieces of at most ``outputCapacity`` bytes. Memory is bounded: zlib's state (~270 KiB at
/// memLevel 8) plus one output buffer. Every zlib return code is checked; a failure is
/// ``FormDataError/compressionFailed(code:message:)``.
///
/// The `z_stream` lives at a stable allocated address (zlib keeps a pointer back to it). One
/// deflater per task; not thread-safe.
package final class GzipDeflater {
    /// Receives each piece of compressed output. The buffer is valid only during the call.
    package typealias Sink = (UnsafeRawBufferPointer) throws(FormDataError) -> Void

    /// ASIHTTPRequest's level, `Z_DEFAULT_COMPRESSION`, which zlib runs as 6.
    package static let defaultLevel: Int32 = 6
    /// The default output buffer: 1 MiB, so level-0 (stored) blocks are copied straight out.
    static let defaultOutputCapacity = 1 << 20

    /// The size of the output buffer.
    let outputCapacity: Int
    /// The level data fed from now on is compressed at.
    private(set) var level: Int32
    /// Uncompressed bytes fed so far.
    private(set) var bytesIn: UInt64 = 0
    /// Compressed bytes produced so far (including the gzip header and trailer).
    private(set) var bytesOut: UInt64 = 0
    /// How many times ``setLevel(_:into:)`` actually changed the level.
    private(set) var levelChanges = 0
    /// Whether ``finish(into:)`` has completed the gzip stream.
    private(set) var isFinished = false

    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer

    /// A deflater at `level` (-1 or 0...9) with an output buffer of `outputCapacity` bytes.
    package init(level: Int32 = defaultLevel, outputCapacity: Int = defaultOutputCapacity) throws(FormDataError) {
        try ZlibSupport.validate(level: level)
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = czlib_deflateInit2(
            stream, level, Z_DEFLATED, ZlibSupport.gzipWindowBits, ZlibSupport.memLevel, Z_DEFAULT_STRATEGY)
        guard code == Z_OK else {
            let message = ZlibSupport.message(code, stream: stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .compressionFailed(code: code, message: message)
        }
        self.stream = stream
        self.outputCapacity = max(outputCapacity, 4096)
        self.output = .allocate(byteCount: self.outputCapacity, alignment: 16)
        self.level = ZlibSupport.effectiveLevel(level)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Compresses all of `input` (at the current level), passing any output to `sink`.
    func compress(_ input: UnsafeRawBufferPointer, into sink: Sink) throws(FormDataError) {
        try checkNotFinished()
        guard var base = input.baseAddress, input.count > 0 else { return }
        var left = input.count
        defer { clearInput() }
        while left > 0 {
            let step = min(left, 1 << 30)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(step)
            try drive(flush: Z_NO_FLUSH, into: sink)
            bytesIn += UInt64(step)
            base += step
            left -= step
        }
    }

    /// Compresses all of `data`, passing any output to `sink`.
    package func compress(_ data: Data, into sink: Sink) throws(FormDataError) {
        let failure: FormDataError? = data.withUnsafeBytes { bytes in
            do throws(FormDataError) { try compress(bytes, into: sink) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Makes data fed from now on compress at `newLevel`, inside the same gzip stream.
    ///
    /// What was fed before is first flushed to a deflate block boundary (`Z_BLOCK`, no byte
    /// alignment, so it costs a few bits), after which `deflateParams` cannot need more output
    /// space; should it still report `Z_BUF_ERROR` (its "call again with more output space"),
    /// the output is drained and it is called again. A level equal to the current one does nothing.
    func setLevel(_ newLevel: Int32, into sink: Sink) throws(FormDataError) {
        try checkNotFinished()
        try ZlibSupport.validate(level: newLevel)
        let target = ZlibSupport.effectiveLevel(newLevel)
        guard target != level else { return }
        clearInput()
        try drive(flush: Z_BLOCK, into: sink)
        var attempts = 0
        while true {
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(outputCapacity)
            stream.pointee.msg = nil  // zlib never clears it; keep error texts current
            let code = deflateParams(stream, target, Z_DEFAULT_STRATEGY)
            try emit(into: sink)
            switch code {
            case Z_OK:
                level = target
                levelChanges += 1
                return
            case Z_BUF_ERROR where attempts < 16:
                attempts += 1
            default:
                throw .compressionFailed(code: code, message: ZlibSupport.message(code, stream: stream))
            }
        }
    }

    /// Ends the gzip stream (final block, CRC-32 and length trailer), passing the output to `sink`.
    /// Valid even when nothing was fed: the result is then a complete gzip of zero bytes.
    package func finish(into sink: Sink) throws(FormDataError) {
        try checkNotFinished()
        clearInput()
        try drive(flush: Z_FINISH, into: sink)
        isFinished = true
    }

    // MARK: - Driving zlib

    /// Calls `deflate(flush)` until it has consumed all input and, for `Z_BLOCK`, has room left
    /// over (so the flush is complete), or, for `Z_FINISH`, until the stream ends.
    private func drive(flush: Int32, into sink: Sink) throws(FormDataError) {
        while true {
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(outputCapacity)
            stream.pointee.msg = nil  // zlib never clears it; keep error texts current
            let code = deflate(stream, flush)
            let produced = try emit(into: sink)
            switch code {
            case Z_STREAM_END:
                return
            case Z_OK:
                break
            case Z_BUF_ERROR where produced == 0 && flush != Z_FINISH:
                // No progress was possible: everything is consumed and flushed already.
                return
            default:
                throw .compressionFailed(code: code, message: ZlibSupport.message(code, stream: stream))
            }
            if flush != Z_FINISH && stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return }
        }
    }

    /// Passes what the last call wrote into the output buffer to `sink`; returns its size.
    @discardableResult
    private func emit(into sink: Sink) throws(FormDataError) -> Int {
        let produced = outputCapacity - Int(stream.pointee.avail_out)
        guard produced > 0 else { return 0 }
        bytesOut += UInt64(produced)
        try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced]))
        return produced
    }

    private func clearInput() {
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
    }

    private func checkNotFinished() throws(FormDataError) {
        if isFinished {
            throw .compressionFailed(code: Z_STREAM_ERROR, message: "the gzip stream is already finished")
        }
    }
}
