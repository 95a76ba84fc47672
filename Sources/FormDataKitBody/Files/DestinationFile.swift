#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Writes a file the caller named all at once or not at all: the bytes go to a hidden sibling
/// (`.<name>.formdatakit-<random>`, same directory, so the final `rename(2)` is atomic) that is
/// renamed over `path` only when everything was written. On any failure the sibling is removed
/// and whatever was at `path` before is untouched. The sibling is created, moved and removed by
/// ``OwnedFile`` (0600, `O_EXCL`: never an existing file, never through a symbolic link), and the
/// rename replaces a link at `path` rather than writing where it points.
package enum DestinationFile {
    /// Receives bytes to append to the file (valid only during the call).
    package typealias Sink = (UnsafeRawBufferPointer) throws(FormDataError) -> Void

    /// Creates the sibling, runs `body` with a sink that appends to it, and puts it in place at `path`.
    /// Failures of the destination are ``FormDataError/fileUnwritable(path:errno:)`` naming `path`
    /// (``FormDataError/fileIsDirectory(path:)`` when `path` is a directory).
    package static func write(
        to path: String, _ body: (_ write: Sink) throws(FormDataError) -> Void
    ) throws(FormDataError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let partial = "\(directory)/.\(url.lastPathComponent).formdatakit-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        let (file, fd) = try OwnedFile.create(at: partial) { code in .fileUnwritable(path: path, errno: code) }
        var closed = false
        do throws(FormDataError) {
            try body { (chunk) throws(FormDataError) in
                try writeAll(chunk, to: fd, destination: path)
            }
            closed = true
            if close(fd) != 0 { throw .fileUnwritable(path: path, errno: errno) }
            let code = file.move(to: path)
            if code != 0 {
                throw code == EISDIR ? .fileIsDirectory(path: path) : .fileUnwritable(path: path, errno: code)
            }
        } catch {
            if !closed { close(fd) }
            file.remove()
            throw error
        }
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, destination: String) throws(FormDataError) {
        let code = FileDescriptorWriting.writeFully(fd, bytes)
        if code != 0 { throw .fileUnwritable(path: destination, errno: code) }
    }
}
