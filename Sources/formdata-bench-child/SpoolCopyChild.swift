#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// The `spool-copy` workload's child: the W3 body (the spool child's form) written to a temporary
/// file with one copy strategy for its file parts, so the strategy `BodySpooler` uses can be
/// compared, in one run, with the ones it does not:
///
///   `sendfile`, `sendfile-reserve`   the kernel's file-to-file copy, without / after reserving
///   `buffer-KIB`, `buffer-KIB-reserve`   `pread`/`write` through one KIB KiB buffer
///
/// The framing is written with `FileDescriptorWriting.writeAll`, the space reserved with
/// `BodySpooler.reserveSpace`, and the file removed at the end, as the library does.
enum SpoolCopyChild {
    static func run(_ arguments: [String]) throws {
        guard let strategy = arguments.first, arguments.count > 1 else {
            throw ChildError.usage("usage: formdata-bench-child spool-copy sendfile[-reserve]|buffer-KIB[-reserve] FILE...")
        }
        let reserve = strategy.hasSuffix("-reserve")
        let name = reserve ? String(strategy.dropLast("-reserve".count)) : strategy
        let bufferKiB: Int?
        if name == "sendfile" {
            bufferKiB = nil
        } else if name.hasPrefix("buffer-"), let kib = Int(name.dropFirst("buffer-".count)), kib > 0 {
            bufferKiB = kib
        } else {
            throw ChildError.usage("unknown copy strategy \(strategy)")
        }
        let source = try bodySource(files: Array(arguments.dropFirst()))
        let (file, fd) = try TemporaryStorage.makeFile(purpose: "spool-copy")
        defer { file.remove() }
        defer { close(fd) }
        if reserve { try BodySpooler.reserveSpace(source.length, in: fd, path: file.path) }
        for segment in source.segments {
            try write(segment, to: fd, path: file.path, bufferKiB: bufferKiB)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, UInt64(info.st_size) == source.length else {
            throw ChildError.failed("spool-copy \(strategy): wrote \(info.st_size) bytes, expected \(source.length)")
        }
    }

    /// Writes one segment: bytes as they are, a file range through the buffer or by `sendfile`.
    static func write(_ segment: BodySegment, to fd: Int32, path: String, bufferKiB: Int?) throws {
        switch segment.content {
        case .bytes(let data):
            let failure: FormDataError? = data.withUnsafeBytes { bytes in
                do throws(FormDataError) { try FileDescriptorWriting.writeAll(bytes, to: fd, path: path) } catch { return error }
                return nil
            }
            if let failure { throw failure }
        case .file(let range):
            let input = try OpenedFileRange(range)
            if let bufferKiB {
                try input.forEachChunk(size: bufferKiB << 10) { (chunk) throws(FormDataError) in
                    try FileDescriptorWriting.writeAll(chunk, to: fd, path: path)
                }
            } else {
                try sendfileAll(from: input.descriptor, range: range, to: fd)
            }
        case .stream:
            throw ChildError.failed("spool-copy: the W3 body has no streams")
        }
    }

    /// The W3 form of `SpoolChild`, built (a build never spools): its segments.
    static func bodySource(files: [String]) throws -> BodySource {
        let request = try W3Form.request(files: files)
        try request.buildPostBody()
        guard let source = request.bodySource else { throw ChildError.failed("no body source") }
        return source
    }

    static func sendfileAll(from input: Int32, range: FileRange, to fd: Int32) throws {
        #if os(Linux)
        var offset = off_t(range.offset)
        var left = range.length
        while left > 0 {
            let sent = sendfile(fd, input, &offset, Int(min(left, 1 << 30)))
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { throw ChildError.failed("sendfile of \(range.path) failed (errno \(errno))") }
            left -= UInt64(sent)
        }
        #else
        throw ChildError.failed("sendfile: Linux only")
        #endif
    }
}
