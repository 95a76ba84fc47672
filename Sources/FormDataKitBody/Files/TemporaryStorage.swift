#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where FormDataKit keeps temporary files: one private directory per process (mode 0700) under
/// the system temporary directory, holding files created with mode 0600.
///
/// The directory is named `FormDataKit-<pid>-<random>` and holds a lock file that the process
/// keeps locked (`flock(2)`, `LOCK_EX`) for as long as it runs; the kernel drops the lock when the
/// process ends, however it ends. The lock file appears under its final name only once it is
/// locked, so a live directory never shows a free lock.
///
/// When a process first needs a temporary file, it sweeps away the directories left by processes
/// that no longer run (killed mid-spool, say): those whose lock it can take. The pid in a name is
/// not consulted: with containers sharing `/tmp`, a directory of another pid namespace would look
/// dead, and a reused pid would keep a stale one. The sweep touches only what this user made: a
/// real directory (not a symlink) owned by the effective uid with mode 0700 and a regular lock
/// file. Its entries are removed relative to an open descriptor of the directory (`unlinkat`,
/// which removes a symlink itself and does not descend into a subdirectory), then the directory.
/// A directory without a lock file (made by an older FormDataKit, or by a process between its
/// `mkdir` and its lock) is left alone.
///
/// Before each use the process's own directory is checked again (a real directory, this user's,
/// mode 0700, the inode it made); when it changed, a new one is made. Files are created relative
/// to the directory's descriptor with `O_NOFOLLOW`. The directory is removed when the process exits.
public enum TemporaryStorage {
    /// The prefix of every per-process directory's name.
    public static let directoryPrefix = "FormDataKit-"

    /// The name of the lock file in each per-process directory. Its owner holds an exclusive
    /// `flock(2)` on it for its lifetime; a lock anyone can take marks a stale directory.
    static let lockFileName = ".lock"

    /// This process's directory while it is in use.
    private struct Owned: Sendable {
        /// The directory's path.
        var path: String
        /// An open descriptor of the directory: files are made relative to it.
        var directoryFD: Int32
        /// The lock file, held with `LOCK_EX` until the descriptor is closed.
        var lockFD: Int32
        /// The directory's identity when it was made.
        var device: UInt64
        var inode: UInt64
    }

    private struct State: Sendable {
        var owned: Owned?
        /// Whether the first-use work (sweep, exit handler) has been done.
        var started = false
    }

    private static let state = Locked(State())
    private static let counter = Locked<UInt64>(0)

    /// The folder the per-process directories are made in: `$FORMDATAKIT_TMPDIR` when set,
    /// otherwise the system temporary directory.
    public static var baseDirectory: String {
        if let custom = ProcessInfo.processInfo.environment["FORMDATAKIT_TMPDIR"], !custom.isEmpty {
            return custom
        }
        var base = NSTemporaryDirectory()
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// This process's private directory, created (and stale ones swept) on first use, and made
    /// anew when the one in use is gone or no longer a private directory of this user.
    /// - Returns: the directory's path.
    /// - Throws: `FormDataError.temporaryFileFailed(path:operation:errno:)` when it cannot be made
    ///   or is not safe to use (not a directory of this user with mode 0700).
    public static func directory() throws(FormDataError) -> String {
        let result: Result<String, FormDataError> = state.withLock { state in
            do throws(FormDataError) {
                return .success(try usableDirectory(&state).path)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Creates a new empty file (mode 0600, through ``OwnedFile``) in the private directory and
    /// returns it with an open read-write descriptor the caller must close.
    package static func makeFile(purpose: String) throws(FormDataError) -> (file: TemporaryFile, descriptor: Int32) {
        let result: Result<(TemporaryFile, Int32), FormDataError> = state.withLock { state in
            var failure = FormDataError.temporaryFileFailed(path: baseDirectory, operation: "create", errno: ENOENT)
            for attempt in 0..<3 {
                let owned: Owned
                do throws(FormDataError) { owned = try usableDirectory(&state) } catch { return .failure(error) }
                let number = counter.withLock { value -> UInt64 in
                    value += 1
                    return value
                }
                let name = "\(purpose)-\(number)-\(randomSuffix())"
                let path = "\(owned.path)/\(name)"
                // Relative to the checked directory's descriptor: no path walk to race with.
                do throws(FormDataError) {
                    let (file, fd) = try OwnedFile.create(at: path, in: owned.directoryFD, name: name, access: .readWrite) { code in
                        .temporaryFileFailed(path: path, operation: "create", errno: code)
                    }
                    return .success((TemporaryFile(file), fd))
                } catch {
                    failure = error
                }
                // The directory vanished (a temp cleaner): make it again.
                guard case .temporaryFileFailed(_, _, ENOENT) = failure, attempt < 2 else { break }
                release(owned)
                state.owned = nil
            }
            return .failure(failure)
        }
        let (file, fd) = try result.get()
        return (file, fd)
    }

    /// A new temporary file (see ``makeFile(purpose:)``) filled by `write`, which gets its open
    /// descriptor and path: the descriptor is closed after, and the file is removed when `write`
    /// throws, so a failed write leaves nothing behind. The one "make a temporary file, write it,
    /// remove it on failure" of the package (spools, compressed bodies, AF stream parts).
    /// - Parameters:
    ///   - purpose: the start of the file's name.
    ///   - write: writes the file's contents.
    /// - Returns: the file, removed when released.
    /// - Throws: ``FormDataError/temporaryFileFailed(path:operation:errno:)`` when the file cannot
    ///   be made, or what `write` throws.
    package static func writeNewFile(purpose: String, _ write: (_ descriptor: Int32, _ path: String) throws -> Void) throws -> TemporaryFile
    {
        let (file, fd) = try makeFile(purpose: purpose)
        defer { close(fd) }
        do {
            try write(fd, file.path)
        } catch {
            file.remove()
            throw error
        }
        return file
    }

    /// ``writeNewFile(purpose:_:)`` for writers that throw only ``FormDataError``.
    /// - Parameters:
    ///   - purpose: the start of the file's name.
    ///   - write: writes the file's contents.
    /// - Returns: the file, removed when released.
    /// - Throws: what making the file or `write` throws.
    package static func writeNewFile(
        purpose: String, typed write: (_ descriptor: Int32, _ path: String) throws(FormDataError) -> Void
    ) throws(FormDataError) -> TemporaryFile {
        do {
            return try writeNewFile(purpose: purpose) { (fd: Int32, path: String) throws in try write(fd, path) }
        } catch let error as FormDataError {
            throw error
        } catch {
            // Unreachable: `write` throws only FormDataError.
            throw .unableToCreateRequest(underlying: UnderlyingError(error))
        }
    }

    /// Removes the per-process directories in `base` whose owner no longer runs (their lock can
    /// be taken), and returns their paths. Runs by itself the first time a process needs a
    /// temporary file.
    ///
    /// Only real directories owned by this user with mode 0700 and a lock file are considered;
    /// a symlink is never followed, a subdirectory never descended into (the directory is then
    /// emptied of its files but kept).
    /// - Parameter base: the folder whose per-process directories are checked (the temporary
    ///   directory's `FormDataKit` base unless given).
    /// - Returns: the paths of the directories removed (or emptied).
    @discardableResult
    public static func sweepStaleDirectories(in base: String = baseDirectory) -> [String] {
        let baseFD = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard baseFD >= 0 else { return [] }
        defer { close(baseFD) }
        var removed: [String] = []
        for entry in entries(of: baseFD) where entry.name.hasPrefix(directoryPrefix) {
            if removeIfStale(entry, in: baseFD) { removed.append("\(base)/\(entry.name)") }
        }
        return removed
    }

    /// Removes this process's directory and the files still in it (called at exit).
    static func removeOwnDirectory() {
        state.withLock { state in
            guard let owned = state.owned else { return }
            state.owned = nil
            if isIntact(owned) {
                _ = removeEntries(of: owned.directoryFD)
                _ = unlinkat(owned.directoryFD, lockFileName, 0)
                _ = rmdir(owned.path)
            }
            release(owned)
        }
    }

    /// The paths of the files currently in this process's directory (for tests and diagnostics;
    /// the lock file is not listed).
    /// - Returns: absolute paths, in no particular order; empty before the first temporary file.
    public static func currentFiles() -> [String] {
        state.withLock { state in
            guard let owned = state.owned else { return [] }
            return entries(of: owned.directoryFD).map(\.name).filter { !$0.hasPrefix(lockFileName) }
                .sorted().map { "\(owned.path)/\($0)" }
        }
    }

    // MARK: - Own directory

    /// The directory in use after checking it, or a new one; runs the first-use sweep once.
    private static func usableDirectory(_ state: inout State) throws(FormDataError) -> Owned {
        if let owned = state.owned {
            if isIntact(owned) { return owned }
            // Removed, replaced (a symlink, another directory) or its mode or owner changed:
            // stop using it, and leave what is at that path alone.
            release(owned)
            state.owned = nil
        }
        let base = baseDirectory
        if !state.started {
            state.started = true
            _ = sweepStaleDirectories(in: base)
            atexit { TemporaryStorage.removeOwnDirectory() }
        }
        let owned = try makeDirectory(in: base)
        state.owned = owned
        return owned
    }

    /// Makes a new private directory in `base` with its lock file, locked.
    private static func makeDirectory(in base: String) throws(FormDataError) -> Owned {
        let path = "\(base)/\(directoryPrefix)\(getpid())-\(randomSuffix())"
        func failure(_ operation: String, _ code: Int32) -> FormDataError {
            .temporaryFileFailed(path: path, operation: operation, errno: code)
        }
        guard mkdir(path, 0o700) == 0 else { throw failure("create directory", errno) }
        let directoryFD = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else {
            let code = errno
            rmdir(path)
            throw failure("create directory", code)
        }
        // The lock file is made and locked under a temporary name, then renamed into place.
        let stagingName = "\(lockFileName)-\(randomSuffix())"
        var lockFD: Int32 = -1
        var info = stat()
        var code: Int32 = 0
        // Exactly 0700 whatever the umask (on the descriptor: no path walk).
        if fchmod(directoryFD, 0o700) != 0 || fstat(directoryFD, &info) != 0 {
            code = errno
        } else if !isPrivateDirectory(info) {
            code = EPERM
        } else {
            do throws(FormDataError) {
                lockFD = try OwnedFile.create(
                    at: "\(path)/\(stagingName)", in: directoryFD, name: stagingName, access: .readWrite
                ) { code in .temporaryFileFailed(path: path, operation: "create directory", errno: code) }.descriptor
                if flock(lockFD, LOCK_EX | LOCK_NB) != 0 || renameat(directoryFD, stagingName, directoryFD, lockFileName) != 0 {
                    code = errno
                }
            } catch {
                if case .temporaryFileFailed(_, _, let failed) = error { code = failed } else { code = EEXIST }
            }
        }
        if code != 0 {
            if lockFD >= 0 { close(lockFD) }
            // In the directory just made (0700, this user's): only this process writes there.
            _ = unlinkat(directoryFD, stagingName, 0)
            close(directoryFD)
            rmdir(path)
            throw failure("create directory", code)
        }
        return Owned(
            path: path, directoryFD: directoryFD, lockFD: lockFD,
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    /// Whether `owned.path` is still the private directory that was made there.
    private static func isIntact(_ owned: Owned) -> Bool {
        var info = stat()
        guard lstat(owned.path, &info) == 0 else { return false }
        return isPrivateDirectory(info) && UInt64(truncatingIfNeeded: info.st_dev) == owned.device
            && UInt64(truncatingIfNeeded: info.st_ino) == owned.inode
    }

    /// Closes the descriptors of `owned` (releasing its lock).
    private static func release(_ owned: Owned) {
        close(owned.lockFD)
        close(owned.directoryFD)
    }

    // MARK: - Sweep

    /// A real directory (from `lstat`: not a symlink) owned by this user with mode exactly 0700.
    private static func isPrivateDirectory(_ info: stat) -> Bool {
        (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == geteuid() && (info.st_mode & 0o7777) == 0o700
    }

    /// Removes directory `entry` of `baseFD` when it is one of ours and its lock is free.
    private static func removeIfStale(_ entry: DirectoryEntry, in baseFD: Int32) -> Bool {
        var info = stat()
        guard fstatat(baseFD, entry.rawName, &info, AT_SYMLINK_NOFOLLOW) == 0, isPrivateDirectory(info) else { return false }
        let directoryFD = openat(baseFD, entry.rawName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { return false }
        defer { close(directoryFD) }
        // What was opened is what was checked (not swapped in between).
        var opened = stat()
        guard fstat(directoryFD, &opened) == 0, isPrivateDirectory(opened),
            opened.st_dev == info.st_dev, opened.st_ino == info.st_ino
        else { return false }
        // No lock file: not made by this scheme, or its owner is just making it. Kept.
        let lockFD = openat(directoryFD, lockFileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard lockFD >= 0 else { return false }
        defer { close(lockFD) }
        var lockInfo = stat()
        guard fstat(lockFD, &lockInfo) == 0, (lockInfo.st_mode & S_IFMT) == S_IFREG,
            flock(lockFD, LOCK_EX | LOCK_NB) == 0
        else { return false }
        // Stale, and now locked by this process until the directory is gone.
        guard removeEntries(of: directoryFD) else { return false }
        _ = unlinkat(directoryFD, lockFileName, 0)
        return unlinkat(baseFD, entry.rawName, AT_REMOVEDIR) == 0
    }

    /// Unlinks every entry of the directory open as `directoryFD` except the lock file, without
    /// following links or descending into subdirectories; whether all of them went.
    private static func removeEntries(of directoryFD: Int32) -> Bool {
        var complete = true
        for entry in entries(of: directoryFD) where entry.name != lockFileName {
            // A subdirectory fails (EISDIR / EPERM) and stays.
            if unlinkat(directoryFD, entry.rawName, 0) != 0 && errno != ENOENT { complete = false }
        }
        return complete
    }

    /// A name read from a directory: as bytes (for the `*at` calls) and as text.
    private struct DirectoryEntry {
        /// The name's bytes with the terminating NUL.
        var rawName: [CChar]
        var name: String
    }

    /// The entries of the directory open as `fd` (without `.` and `..`), read through a
    /// descriptor of its own so `fd` is left as it was.
    private static func entries(of fd: Int32) -> [DirectoryEntry] {
        let readFD = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard readFD >= 0 else { return [] }
        guard let stream = fdopendir(readFD) else {
            close(readFD)
            return []
        }
        defer { closedir(stream) }
        var result: [DirectoryEntry] = []
        while let entry = readdir(stream) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { bytes -> [CChar] in
                let chars = bytes.bindMemory(to: CChar.self)
                return Array(chars[0..<strnlen(chars.baseAddress!, chars.count)]) + [0]
            }
            let name = String(decoding: raw.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if name == "." || name == ".." { continue }
            result.append(DirectoryEntry(rawName: raw, name: name))
        }
        return result
    }

    private static func randomSuffix() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}
