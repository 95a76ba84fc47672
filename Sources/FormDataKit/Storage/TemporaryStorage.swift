#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where FormDataKit keeps temporary files: one private directory per process (mode 0700) under
/// the system temporary directory, holding files created with mode 0600.
///
/// The directory is named `FormDataKit-<pid>-<random>`. When it is first created, directories
/// left by processes that no longer run (killed mid-spool, say) are swept away; the process's
/// own directory is removed when it exits.
public enum TemporaryStorage {
    /// The prefix of every per-process directory's name.
    public static let directoryPrefix = "FormDataKit-"

    private static let state = Locked<String?>(nil)
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

    /// This process's private directory, created (and stale ones swept) on first use.
    public static func directory() throws(FormDataError) -> String {
        let result: Result<String, FormDataError> = state.withLock { current in
            if let path = current, access(path, F_OK) == 0 { return .success(path) }
            let base = baseDirectory
            if current == nil {
                _ = sweepStaleDirectories(in: base)
                atexit { TemporaryStorage.removeOwnDirectory() }
            }
            let path = "\(base)/\(directoryPrefix)\(getpid())-\(randomSuffix())"
            guard mkdir(path, 0o700) == 0 else {
                return .failure(.temporaryFileFailed(path: path, operation: "create directory", errno: errno))
            }
            current = path
            return .success(path)
        }
        return try result.get()
    }

    /// Creates a new empty file (mode 0600) in the private directory and returns it with an open
    /// read-write descriptor the caller must close.
    package static func makeFile(purpose: String) throws(FormDataError) -> (file: TemporaryFile, descriptor: Int32) {
        for attempt in 0..<3 {
            let dir = try directory()
            let number = counter.withLock { value -> UInt64 in value += 1; return value }
            let path = "\(dir)/\(purpose)-\(number)-\(randomSuffix())"
            let fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
            if fd >= 0 { return (TemporaryFile(path: path), fd) }
            let code = errno
            // The directory vanished (a temp cleaner): make it again.
            if code == ENOENT && attempt < 2 { state.withLock { $0 = nil }; continue }
            throw .temporaryFileFailed(path: path, operation: "create", errno: code)
        }
        throw .temporaryFileFailed(path: baseDirectory, operation: "create", errno: ENOENT)
    }

    /// Removes the per-process directories in `base` whose process no longer runs, and returns
    /// their paths. Runs by itself the first time a process needs a temporary file.
    @discardableResult
    public static func sweepStaleDirectories(in base: String = baseDirectory) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(directoryPrefix) {
            let rest = name.dropFirst(directoryPrefix.count)
            guard let pidText = rest.split(separator: "-").first, let pid = pid_t(pidText),
                pid != getpid()
            else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH {
                let path = "\(base)/\(name)"
                if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append(path) }
            }
        }
        return removed
    }

    /// Removes this process's directory and anything still in it (called at exit).
    static func removeOwnDirectory() {
        if let path = state.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The paths of the files currently in this process's directory (for tests and diagnostics).
    public static func currentFiles() -> [String] {
        guard let dir = state.withLock({ $0 }),
            let names = try? FileManager.default.contentsOfDirectory(atPath: dir)
        else { return [] }
        return names.sorted().map { "\(dir)/\($0)" }
    }

    private static func randomSuffix() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}
