#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSpace
import Foundation

/// Checks on files a form refers to: only regular files (or links to one) can be sent.
///
/// A FIFO would block the thread that opens it until a writer comes, a device such as
/// `/dev/zero` never ends (or reports size 0), and a file of a kernel file system (`/proc`,
/// `/sys`, cgroups) reports a size that says nothing about its content: each is a
/// ``FormDataError/notARegularFile(path:kind:)`` naming the path.
package enum FileInspection {
    /// The size of the readable regular file at `path`; a missing path, a directory, a file that
    /// is not a regular file, or an unreadable file is a ``FormDataError`` naming the path. A path
    /// whose U+FFFD stand for bytes that were not UTF-8 in a file's name is
    /// ``FormDataError/fileNameNotUTF8(path:)``, naming the file by its real bytes.
    ///
    /// With `inFull` false, the `statfs(2)` for kernel file systems and the `access(2)` for
    /// readability are left out: for a file checked in full when it was added, whose every read
    /// opens it (a file made unreadable since fails there, ``FormDataError/fileUnreadable(path:errno:)``)
    /// and checks the open descriptor in full (``regularFileSize(descriptor:path:)``); a form's
    /// build checks its files on every send, as ASIHTTPRequest sized them when it built a body.
    package static func regularFileSize(at path: String, inFull: Bool = true) throws(FormDataError) -> UInt64 {
        var info = stat()
        // `withCString`: a String passed straight to a C function is copied into a new array first.
        guard path.withCString({ stat($0, &info) }) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR, let error = undecodedNameError(path: path) { throw error }
            throw OpenedFileRange.openError(path: path, errno: code)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw .fileIsDirectory(path: path) }
        if let kind = kind(ofMode: info.st_mode) ?? (inFull ? pseudoFileSystemKind(path: path, device: info.st_dev) : nil) {
            throw .notARegularFile(path: path, kind: kind)
        }
        let user = processUser
        guard
            !inFull || ownerMayRead(mode: info.st_mode, owner: info.st_uid, realUser: user.real, effectiveUser: user.effective)
                || path.withCString({ access($0, R_OK) }) == 0
        else {
            throw .fileUnreadable(path: path, errno: errno)
        }
        return UInt64(info.st_size)
    }

    /// Whether a file's mode and owner alone say a process of these users may read it: the
    /// process owns it and the owner may read (the owner's bits are the owner's permission,
    /// whatever the ACL or the group and other bits say). Then `access(2)` — a second walk of the
    /// path, a fifth of an `addFile` — is left out; in any other case it decides (it answers for
    /// the real user: a set-user-ID process always asks it). Only a security module (SELinux,
    /// AppArmor) could still refuse the read: the open at the send then fails with
    /// ``FormDataError/fileUnreadable(path:errno:)``, as for a file made unreadable after it was added.
    static func ownerMayRead(mode: mode_t, owner: uid_t, realUser: uid_t, effectiveUser: uid_t) -> Bool {
        realUser == effectiveUser && owner == realUser && (mode & S_IRUSR) != 0
    }

    /// The process's real and effective user, read once (a process that changes them later gets
    /// `access(2)`'s answer or, at worst, the open's error at the send).
    private static let processUser = (real: getuid(), effective: geteuid())

    /// The size of the regular file open as `descriptor` (`path` names it in errors), checked as
    /// ``regularFileSize(at:)`` checks a path.
    static func regularFileSize(descriptor: Int32, path: String) throws(FormDataError) -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .fileUnreadable(path: path, errno: errno) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw .fileIsDirectory(path: path) }
        if let kind = kind(ofMode: info.st_mode) ?? pseudoFileSystemKind(descriptor: descriptor, device: info.st_dev) {
            throw .notARegularFile(path: path, kind: kind)
        }
        return UInt64(info.st_size)
    }

    /// For a `path` that names no file: ``FormDataError/fileNameNotUTF8(path:)`` naming the real
    /// file by its bytes when the path's U+FFFD stand for bytes that were not UTF-8 in a file's
    /// name (see ``NonUTF8FileNames/undecodedPath(for:)``); nil otherwise.
    package static func undecodedNameError(path: String) -> FormDataError? {
        NonUTF8FileNames.undecodedPath(for: path).map { .fileNameNotUTF8(path: NonUTF8FileNames.display($0)) }
    }

    /// What the file at `path` is when it exists and is neither a regular file nor a directory.
    static func nonRegularKind(at path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return kind(ofMode: info.st_mode)
    }

    /// What a file of mode `mode` is, or nil for a regular file or a directory.
    private static func kind(ofMode mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "FIFO"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        case S_IFSOCK: return "socket"
        default: return "special file"
        }
    }

    /// Linux's kernel file systems whose files are generated when read: their size is 0 or a page,
    /// whatever they hold, by `statfs(2)`'s magic number (never matched elsewhere: the C call
    /// gives 0 there).
    private static let pseudoFileSystems: [Int: String] = [
        0x9fa0: "procfs file", 0x6265_6572: "sysfs file", 0x0027_e0eb: "cgroup file", 0x6367_7270: "cgroup file",
        0x6462_6720: "debugfs file", 0x7472_6163: "tracefs file", 0x7363_6673: "securityfs file",
    ]

    private static func pseudoFileSystemKind(path: String, device: dev_t) -> String? {
        guard !isKnownDiskDevice(device) else { return nil }
        return pseudoFileSystemKind(device: device, type: path.withCString { cfilespace_filesystem_type(-1, $0) })
    }

    private static func pseudoFileSystemKind(descriptor: Int32, device: dev_t) -> String? {
        isKnownDiskDevice(device) ? nil : pseudoFileSystemKind(device: device, type: cfilespace_filesystem_type(descriptor, nil))
    }

    /// The kernel file system `type` (a `statfs(2)` magic number) stands for, if any; a block
    /// device found to hold none is remembered.
    private static func pseudoFileSystemKind(device: dev_t, type: Int64) -> String? {
        // 0: statfs failed (or no such call): nothing is known, nothing remembered.
        guard type != 0 else { return nil }
        if let kind = pseudoFileSystems[Int(type)] { return kind }
        if cfilespace_device_major(UInt64(device)) != 0 {
            diskDevices.withLock { devices in
                if devices.count >= 64 { devices.removeAll() }  // a few devices at most, in practice
                devices.insert(UInt64(device))
            }
        }
        return nil
    }

    private static func isKnownDiskDevice(_ device: dev_t) -> Bool { diskDevices.withLock { $0.contains(UInt64(device)) } }

    /// Block devices whose file system was found not to be one of ``pseudoFileSystems``: a
    /// form's files are checked on every send, and a block device's file system does not change
    /// while it is mounted, so one `statfs(2)` per device is enough. Only block devices (a major
    /// number other than 0): kernel file systems, like tmpfs, NFS or FUSE, have anonymous device
    /// numbers (major 0), which the kernel reuses for whatever it mounts next — a number once a
    /// tmpfs's could later be a procfs's, whose files would then pass as empty regular files.
    private static let diskDevices = Locked<Set<UInt64>>([])
}
