#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A file FormDataKit created, and the one place the package creates, moves and removes a file
/// it writes: spools and compressed bodies (``TemporaryStorage``), the sibling a destination is
/// written through (``DestinationFile``), a response download and its temporary path.
///
/// The rules, for every one of them:
/// - **Created, never reused.** `open(2)` with `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
///   O_NONBLOCK`, mode 0600: a path that exists in any form — a regular file (whoever owns it,
///   whatever its mode), a symbolic link (even a dangling one), a FIFO, a device, a socket — is
///   refused with ``FormDataError/fileExists(path:)`` naming it, and left exactly as it was.
/// - **Never blocks.** `O_EXCL` refuses a FIFO or a device before it could be opened, and
///   `O_NONBLOCK` makes sure of it; it is cleared once the new file is known to be a regular one.
/// - **Checked after the open.** `fstat(2)` of the descriptor must show a regular file of the
///   effective user; the mode is set to exactly 0600 on the descriptor (a default ACL or umask
///   cannot widen it). Otherwise the new file is removed and creation fails.
/// - **Removed only while it is ours.** ``remove()`` and ``move(to:)`` act on the path only while
///   it still names the file that was created (same device and inode, from `lstat(2)`): a file
///   someone put in its place is never unlinked or moved.
struct OwnedFile: Sendable, Equatable {
    /// How the new file is opened.
    enum Access: Sendable {
        /// `O_WRONLY`.
        case writeOnly
        /// `O_RDWR`.
        case readWrite
    }

    /// Where the file was created.
    let path: String
    /// The file's device and inode when it was created: what ``remove()`` checks.
    private let device: UInt64
    private let inode: UInt64

    /// Creates a new file at `path` under the rules above.
    /// - Parameters:
    ///   - path: where to create it (absolute, or relative to `directory`'s descriptor when `name` is given).
    ///   - directory: a directory's open descriptor that `name` is relative to (no path walk to race with).
    ///   - name: the file's name in `directory`; nil: `path` is opened as it is.
    ///   - access: how the descriptor is opened.
    ///   - failure: the error for a system error number other than `EEXIST` (it names the path the
    ///     caller's users know: the destination, the temporary path…).
    /// - Returns: the file and its open descriptor, which the caller closes.
    /// - Throws: ``FormDataError/fileExists(path:)`` naming `path` when anything exists there;
    ///   `failure(errno)` for any other failure (`EPERM` when the new file is not a regular file of
    ///   this user); nothing is left behind.
    static func create(
        at path: String, in directory: Int32 = AT_FDCWD, name: String? = nil, access: Access = .writeOnly,
        failure: (_ errno: Int32) -> FormDataError
    ) throws(FormDataError) -> (file: OwnedFile, descriptor: Int32) {
        let mode = access == .readWrite ? O_RDWR : O_WRONLY
        let descriptor = openat(directory, name ?? path, O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | mode, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw code == EEXIST ? .fileExists(path: path) : failure(code)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            // Unreachable on an open descriptor; without its identity the path is not touched.
            let code = errno
            close(descriptor)
            throw failure(code)
        }
        let file = OwnedFile(
            path: path, device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
        var code: Int32 = 0
        if (info.st_mode & S_IFMT) != S_IFREG || info.st_uid != geteuid() {
            code = EPERM
        } else if fchmod(descriptor, 0o600) != 0 {
            code = errno
        } else {
            let flags = fcntl(descriptor, F_GETFL)
            if flags < 0 || fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) != 0 { code = errno }
        }
        guard code == 0 else {
            close(descriptor)
            file.remove()
            throw failure(code)
        }
        return (file, descriptor)
    }

    /// Whether ``path`` still names the file that was created (not removed, renamed away or replaced).
    var isInPlace: Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return UInt64(truncatingIfNeeded: info.st_dev) == device && UInt64(truncatingIfNeeded: info.st_ino) == inode
    }

    /// Unlinks ``path`` if it still names the file that was created; anything else there is left alone.
    func remove() {
        if isInPlace { unlink(path) }
    }

    /// Moves the file to `destination` with one `rename(2)` (replacing what is there), if ``path``
    /// still names the file that was created.
    /// - Parameter destination: the new path (same file system).
    /// - Returns: 0, or the system error number: `ENOENT` when the file is no longer at ``path``
    ///   (something else is there, or nothing), `EXDEV` across file systems.
    func move(to destination: String) -> Int32 {
        guard isInPlace else { return ENOENT }
        return rename(path, destination) == 0 ? 0 : errno
    }

    /// Opens the file again to read it, if ``path`` still names it (checked on the new descriptor).
    /// - Returns: a read-only descriptor the caller closes, or the system error number.
    func openForReading() -> Result<Int32, UnderlyingErrno> {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return .failure(UnderlyingErrno(code: errno)) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, UInt64(truncatingIfNeeded: info.st_dev) == device,
            UInt64(truncatingIfNeeded: info.st_ino) == inode
        else {
            close(descriptor)
            return .failure(UnderlyingErrno(code: ENOENT))
        }
        return .success(descriptor)
    }

    /// A system error number as an `Error` (for ``openForReading()``'s result).
    struct UnderlyingErrno: Error, Sendable {
        /// The `errno` value.
        let code: Int32
    }
}
