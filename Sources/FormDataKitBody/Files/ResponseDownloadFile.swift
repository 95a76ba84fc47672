#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A response body written to a file as it arrives (ASIHTTPRequest's `downloadDestinationPath`
/// and `temporaryFileDownloadPath`): the bytes go to a temporary file, which is moved to the
/// destination only when the response is complete. The destination never holds a partial body:
/// whatever was there stays until the complete file replaces it in one `rename(2)`. On failure
/// or cancel the temporary file is removed.
///
/// The temporary file is the caller's path when given, else a hidden sibling of the destination
/// (`.<name>.formdatakit-<random>`, same directory: the final rename is atomic). Either way it is
/// created new by ``OwnedFile``: a caller's path that exists (a file planted there, a link, a
/// FIFO, a device, another download's temporary file) is refused with
/// ``FormDataError/fileExists(path:)`` and left as it was, without blocking. Not thread-safe:
/// its owner calls it in order.
package final class ResponseDownloadFile: @unchecked Sendable {
    // `@unchecked`: its owner calls it in order, one call at a time (a serial mailbox).

    /// Where the complete body goes.
    let destination: String
    /// Where the body is written while it arrives.
    var temporaryPath: String { file.path }
    private let file: OwnedFile
    private var descriptor: Int32

    /// Creates the temporary file (0600, new: never an existing file or a symbolic link).
    /// - Parameters:
    ///   - destination: where the complete body goes.
    ///   - temporaryPath: where it is written meanwhile; nil: a hidden sibling of `destination`.
    /// - Throws: ``FormDataError/fileExists(path:)`` naming the temporary path when something is
    ///   there already; ``FormDataError/fileUnwritable(path:errno:)`` naming it when it cannot be created.
    package init(destination: String, temporaryPath: String?) throws(FormDataError) {
        self.destination = destination
        let url = URL(fileURLWithPath: destination)
        let path =
            temporaryPath
            ?? "\(url.deletingLastPathComponent().path)/.\(url.lastPathComponent).formdatakit-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        (file, descriptor) = try OwnedFile.create(at: path) { code in .fileUnwritable(path: path, errno: code) }
    }

    deinit { discard() }

    /// Appends `data`.
    /// - Parameter data: the next bytes of the body.
    /// - Throws: ``FormDataError/fileUnwritable(path:errno:)`` naming the temporary path (a full disk).
    package func write(_ data: Data) throws(FormDataError) {
        guard descriptor >= 0 else { return }
        let code = data.withUnsafeBytes { FileDescriptorWriting.writeFully(descriptor, $0) }
        if code != 0 { throw .fileUnwritable(path: temporaryPath, errno: code) }
    }

    /// Empties the file: a new response (after a redirect or a retry) starts the body again.
    /// - Throws: ``FormDataError/fileUnwritable(path:errno:)`` naming the temporary path.
    package func restart() throws(FormDataError) {
        guard descriptor >= 0 else { return }
        if ftruncate(descriptor, 0) != 0 || lseek(descriptor, 0, SEEK_SET) < 0 {
            throw .fileUnwritable(path: temporaryPath, errno: errno)
        }
    }

    /// Closes the file and moves it to ``destination`` (replacing what was there). Across file
    /// systems it is copied to a hidden sibling of the destination first, then renamed. Only the
    /// file that was created is moved or copied: when something else is at the temporary path
    /// now, it fails and leaves that alone.
    /// - Throws: ``FormDataError/fileUnwritable(path:errno:)`` naming the destination (the
    ///   temporary file is removed then, and the destination left as it was), or the temporary
    ///   path (`ENOENT`) when the file is no longer there.
    package func complete() throws(FormDataError) {
        guard descriptor >= 0 else { return }
        let closed = close(descriptor)
        descriptor = -1
        if closed != 0 {
            let code = errno
            file.remove()
            throw .fileUnwritable(path: temporaryPath, errno: code)
        }
        let code = file.move(to: destination)
        if code == 0 { return }
        guard code == EXDEV else {
            file.remove()
            if code == ENOENT { throw .fileUnwritable(path: temporaryPath, errno: code) }
            throw code == EISDIR ? .fileIsDirectory(path: destination) : .fileUnwritable(path: destination, errno: code)
        }
        defer { file.remove() }
        try DestinationFile.write(to: destination) { (sink) throws(FormDataError) in
            let input: Int32
            switch file.openForReading() {
            case .success(let opened): input = opened
            case .failure(let failure): throw .fileUnwritable(path: destination, errno: failure.code)
            }
            defer { close(input) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let count = read(input, buffer.baseAddress, buffer.count)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw .fileUnwritable(path: destination, errno: errno)
                }
                if count == 0 { return }
                try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }
    }

    /// Closes and removes the temporary file (failure, cancel); the destination is untouched, and
    /// so is anything that took the temporary file's place.
    package func discard() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        file.remove()
    }
}
