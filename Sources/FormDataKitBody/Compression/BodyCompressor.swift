#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib
import Foundation

/// A gzip-compressed body: in memory, or in a private temporary file (removed when the last
/// reference goes away).
package enum CompressedBody: Sendable {
    /// The compressed bytes in memory.
    case memory(Data)
    /// The compressed bytes in a temporary file of `length` bytes.
    case file(TemporaryFile, length: UInt64)

    /// The compressed size in bytes.
    package var length: UInt64 {
        switch self {
        case .memory(let data): return UInt64(data.count)
        case .file(_, let length): return length
        }
    }
}

/// How a body is compressed.
package struct CompressionSettings: Sendable, Equatable {
    /// The deflate level for content that is not already compressed (-1 or 0...9).
    var level: Int32
    /// Whether parts whose content type is in ``AlreadyCompressedTypes`` are stored (level 0).
    var adaptive: Bool
    /// Compression threads: 0 = automatic (see ``BodyCompressor/threadCount(for:length:)``),
    /// 1 = the single-thread streaming ``GzipDeflater``, n ≥ 2 = ``ParallelGzipCompressor``
    /// with n workers whatever the body size.
    var threads: Int
    /// The block size of parallel compression.
    var blockSize: Int

    /// Level `level`, adaptive when `adaptive`, on `threads` threads (0 = automatic) in blocks
    /// of `blockSize` bytes when parallel.
    package init(
        level: Int32 = GzipDeflater.defaultLevel, adaptive: Bool = true, threads: Int = 0,
        blockSize: Int = ParallelGzipCompressor.defaultBlockSize
    ) {
        self.level = level
        self.adaptive = adaptive
        self.threads = threads
        self.blockSize = blockSize
    }
}

/// What one compression pass did.
package struct CompressionSummary: Sendable, Equatable {
    /// Uncompressed bytes read from the body.
    var bytesIn: UInt64
    /// Compressed bytes produced.
    var bytesOut: UInt64
    /// How many times the deflate level changed between parts.
    var levelChanges: Int
}

/// Compresses a ``BodySource`` into one gzip stream in a single pass, with bounded memory: the
/// body is read in chunks of at most ``readSize`` bytes (one chunk never spans two segments)
/// and the output leaves in pieces of at most 1 MiB.
///
/// Adaptive compression: a segment that is the content of a part whose type is in
/// ``AlreadyCompressedTypes`` is deflated at level 0 (stored blocks: about 5 bytes per 64 KiB,
/// at memory-copy speed); a segment of any other part type at the chosen level. Structure
/// segments (boundaries, part headers, small parts coalesced with them) shorter than
/// ``structureSwitchThreshold`` keep whatever level is current — a level switch costs a block
/// boundary and is not worth it for a few hundred bytes — and longer ones use the chosen level.
package enum BodyCompressor {
    /// Bodies up to this size (uncompressed) are compressed into memory by ``Destination/automatic``.
    static let memoryLimit: UInt64 = 1 << 20
    /// The read size: 1 MiB.
    static let readSize = 1 << 20
    /// Structure segments at least this long are compressed at the chosen level (see above).
    static let structureSwitchThreshold: UInt64 = 4096
    /// With automatic threads, bodies shorter than this (4 MiB) are compressed on one thread:
    /// starting workers and priming blocks is not worth it for them.
    static let parallelMinimumLength: UInt64 = 4 << 20
    /// With automatic threads, the most workers used (one per active processor up to this).
    static let maximumAutomaticThreads = 8

    /// The number of compression threads `requested` (0 = automatic, or a count ≥ 1) means for
    /// a body of `length` bytes. Automatic is one thread for bodies under
    /// ``parallelMinimumLength`` or on a machine with one active processor, else one per active
    /// processor, at most ``maximumAutomaticThreads``. A count asked for is passed on as it is:
    /// the parallel compressor clamps it to the processors and the body's blocks
    /// (``ParallelGzipCompressor/workerCount(requested:length:blockSize:processors:)``).
    static func threadCount(for requested: Int, length: UInt64) -> Int {
        if requested > 0 { return requested }
        let processors = min(ProcessInfo.processInfo.activeProcessorCount, maximumAutomaticThreads)
        return length < parallelMinimumLength || processors < 2 ? 1 : processors
    }

    /// Throws ``FormDataError/compressionFailed(code:message:)`` unless `threads` is 0 (automatic) or more.
    static func validate(threads: Int) throws(FormDataError) {
        guard threads >= 0 else {
            throw .compressionFailed(
                code: Z_STREAM_ERROR, message: "invalid compression thread count \(threads) (use 0 for automatic, or 1 or more)")
        }
    }

    /// Where compressed output goes.
    package enum Destination: Sendable {
        /// Into memory.
        case memory
        /// Into a new private temporary file.
        case temporaryFile
        /// Memory for bodies up to ``BodyCompressor/memoryLimit``, a temporary file beyond.
        case automatic
    }

    /// Compresses `source` with `settings` into `destination`. A temporary file is named after
    /// `purpose` and removed again when compression fails.
    package static func compress(
        _ source: BodySource, settings: CompressionSettings = CompressionSettings(), to destination: Destination = .automatic,
        purpose: String = "gzip"
    ) throws(FormDataError) -> CompressedBody {
        try ZlibSupport.validate(level: settings.level)
        try validate(threads: settings.threads)
        let toFile: Bool
        switch destination {
        case .memory: toFile = false
        case .temporaryFile: toFile = true
        case .automatic: toFile = source.length > memoryLimit
        }
        if !toFile {
            var out = Data()
            try compress(source, settings: settings) { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
            return .memory(out)
        }
        var length: UInt64 = 0
        let file = try TemporaryStorage.writeNewFile(purpose: purpose) { (fd, path) throws(FormDataError) in
            length = try compress(source, settings: settings) { (chunk) throws(FormDataError) in
                try FileDescriptorWriting.writeAll(chunk, to: fd, path: path)
            }.bytesOut
        }
        return .file(file, length: length)
    }

    /// Compresses `source` with `settings`, passing the gzip stream to `sink` piece by piece, on
    /// the number of threads ``threadCount(for:length:)`` picks for the bytes that will be
    /// deflated (``deflatedLength(of:settings:)``): a body that is mostly stored parts is copied
    /// on one thread, where workers would only add hand-offs.
    @discardableResult
    package static func compress(
        _ source: BodySource, settings: CompressionSettings, into sink: GzipDeflater.Sink
    ) throws(FormDataError) -> CompressionSummary {
        try validate(threads: settings.threads)
        let threads = threadCount(for: settings.threads, length: deflatedLength(of: source, settings: settings))
        if threads > 1 {
            return try ParallelGzipCompressor(threads: threads, blockSize: settings.blockSize)
                .compress(source, settings: settings, into: sink)
        }
        let deflater = try GzipDeflater(level: settings.level)
        let chosenLevel = deflater.level
        let reader = source.makeReader(chunkSize: readSize)
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Int(min(UInt64(readSize), max(source.length, 1))), alignment: 16)
        defer { buffer.deallocate() }
        var currentSegment = -1
        while true {
            let count = try reader.read(into: buffer)
            if count == 0 { break }
            if settings.adaptive && reader.segmentIndex != currentSegment {
                currentSegment = reader.segmentIndex
                if let wanted = level(for: source.segments[currentSegment], chosen: chosenLevel) {
                    try deflater.setLevel(wanted, into: sink)
                }
            }
            try deflater.compress(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), into: sink)
        }
        try deflater.finish(into: sink)
        return CompressionSummary(bytesIn: deflater.bytesIn, bytesOut: deflater.bytesOut, levelChanges: deflater.levelChanges)
    }

    /// How many bytes of `source` are deflated at a level above 0 with `settings`: all of them
    /// without adaptive compression, none at level 0, else all but the content of parts whose
    /// type is already compressed (short structure segments, which keep the current level, are
    /// counted as deflated).
    static func deflatedLength(of source: BodySource, settings: CompressionSettings) -> UInt64 {
        if settings.level == 0 { return 0 }
        guard settings.adaptive else { return source.length }
        return source.segments.reduce(0) { total, segment in
            level(for: segment, chosen: settings.level) == 0 ? total : total + segment.length
        }
    }

    /// The level `segment` should be compressed at, or nil to keep the current one.
    static func level(for segment: BodySegment, chosen: Int32) -> Int32? {
        guard let type = segment.partContentType else {
            return segment.length >= structureSwitchThreshold ? chosen : nil
        }
        return AlreadyCompressedTypes.contains(type) ? 0 : chosen
    }
}
