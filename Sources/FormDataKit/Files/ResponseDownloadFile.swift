#if canImport(Glibc)
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
/// (`.<name>.formdatakit-<random>`, same directory: the final rename is atomic). Not thread-safe:
/// its owner calls it in order.
final class ResponseDownloadFile: @unchecked Sendable {
    // `@unchecked`: its owner calls it in order, one call at a time (a serial mailbox).

    /// Where the complete body goes.
    let destination: String
    /// Where the body is written while it arrives.
    let temporaryPath: String
    private var descriptor: Int32

    /// Opens the temporary file (created 0600, truncated; never through a symbolic link).
    /// - Parameters:
    ///   - destination: where the complete body goes.
    ///   - temporaryPath: where it is written meanwhile; nil: a hidden sibling of `destination`.
    /// - Throws: ``FormDataError/fileUnwritable(path:errno:)`` naming the temporary path.
    init(destination: String, temporaryPath: String?) throws(FormDataError) {
        self.destination = destination
        let url = URL(fileURLWithPath: destination)
        let sibling =
            "\(url.deletingLastPathComponent().path)/.\(url.lastPathComponent).formdatakit-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        self.temporaryPath = temporaryPath ?? sibling
        let flags = O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (temporaryPath == nil ? O_EXCL : 0)
        descriptor = open(self.temporaryPath, flags, 0o600)
        guard descriptor >= 0 else { throw .fileUnwritable(path: self.temporaryPath, errno: errno) }
    }

    deinit { discard() }

    /// Appends `data`.
    /// - Parameter data: the next bytes of the body.
    /// - Throws: ``FormDataError/fileUnwritable(path:errno:)`` naming the temporary path (a full disk).
    func write(_ data: Data) throws(FormDataError) {
        guard descriptor >= 0 else { return }
        let code = data.withUnsafeBytes { FileDescriptorWriting.writeFully(descriptor, $0) }
        if code != 0 { throw .fileUnwritable(path: temporaryPath, errno: code) }
    }

    /// Empties the file: a new response (after a redirect or a retry) starts the body again.
    /// - Throws: ``FormDataError/fileUnwritable(path:errno:)`` naming the temporary path.
    func restart() throws(FormDataError) {
        guard descriptor >= 0 else { return }
        if ftruncate(descriptor, 0) != 0 || lseek(descriptor, 0, SEEK_SET) < 0 {
            throw .fileUnwritable(path: temporaryPath, errno: errno)
        }
    }

    /// Closes the file and moves it to ``destination`` (replacing what was there). Across file
    /// systems it is copied to a hidden sibling of the destination first, then renamed.
    /// - Throws: ``FormDataError/fileUnwritable(path:errno:)`` naming the destination (the
    ///   temporary file is removed then, and the destination left as it was).
    func complete() throws(FormDataError) {
        guard descriptor >= 0 else { return }
        let closed = close(descriptor)
        descriptor = -1
        if closed != 0 {
            let code = errno
            unlink(temporaryPath)
            throw .fileUnwritable(path: temporaryPath, errno: code)
        }
        if rename(temporaryPath, destination) == 0 { return }
        let code = errno
        guard code == EXDEV else {
            unlink(temporaryPath)
            throw code == EISDIR ? .fileIsDirectory(path: destination) : .fileUnwritable(path: destination, errno: code)
        }
        defer { unlink(temporaryPath) }
        try DestinationFile.write(to: destination) { (sink) throws(FormDataError) in
            let input = open(temporaryPath, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else { throw .fileUnwritable(path: destination, errno: errno) }
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

    /// Closes and removes the temporary file (failure, cancel); the destination is untouched.
    func discard() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        unlink(temporaryPath)
    }
}
