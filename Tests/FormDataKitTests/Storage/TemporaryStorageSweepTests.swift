#if canImport(Glibc)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
import Testing
@testable import FormDataKit

/// The sweep of stale per-process temporary directories: it removes only real directories
/// owned by this user with mode 0700 whose lock file nobody holds, never follows a link, and does
/// not care what the pid in the name says (another pid namespace sharing /tmp, a reused pid).
@Suite("Temporary directory sweep")
struct TemporaryStorageSweepTests {
    /// The lock file's name inside each directory (pinned here: it is an on-disk protocol between
    /// processes, possibly of different versions).
    static let lockName = ".lock"
    /// A pid that cannot be running: above the kernel's pid_max.
    static let deadPID = Int32.max - 1

    /// Makes a directory that looks like another process's storage: `mode`, a body file, and a
    /// lock file nobody holds (unless `lockFile` is false).
    static func makeStorageLike(_ path: String, mode: mode_t = 0o700, lockFile: Bool = true) throws {
        #expect(mkdir(path, 0o700) == 0)
        #expect(chmod(path, mode) == 0)
        try Data("body".utf8).write(to: URL(fileURLWithPath: path + "/body-1-abc"))
        if lockFile { try Data().write(to: URL(fileURLWithPath: path + "/" + lockName)) }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    @Test("The lock file name is the one this suite pins")
    func lockFileName() {
        #expect(TemporaryStorage.lockFileName == Self.lockName)
    }

    @Test("A symlink named like a stale directory is not followed: its target and the link survive")
    func symlinkNotFollowed() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        // The target looks exactly like a stale directory (0700, ours, free lock): only the link
        // check protects it.
        let target = scratch.path + "/precious"
        try Self.makeStorageLike(target)
        let link = "\(scratch.path)/FormDataKit-\(Self.deadPID)-link"
        #expect(symlink(target, link) == 0)
        // A link to a file, too.
        let fileTarget = try scratch.write("precious.txt", "keep me")
        let fileLink = "\(scratch.path)/FormDataKit-\(Self.deadPID)-filelink"
        #expect(symlink(fileTarget, fileLink) == 0)

        let removed = TemporaryStorage.sweepStaleDirectories(in: scratch.path)
        #expect(removed.isEmpty)
        #expect(FileManager.default.fileExists(atPath: target + "/body-1-abc"))
        #expect(FileManager.default.fileExists(atPath: fileTarget))
        #expect(Self.exists(link), "the sweep removed a symlink it does not own")
        #expect(Self.exists(fileLink), "the sweep removed a symlink it does not own")
    }

    @Test("A directory with another mode (0755) or another owner is not swept")
    func otherModeOrOwnerNotSwept() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let open = "\(scratch.path)/FormDataKit-\(Self.deadPID)-open"
        try Self.makeStorageLike(open, mode: 0o755)
        var expectedKept = [open]
        if geteuid() == 0 {
            // Running as root, a directory can be given to another user (nobody).
            let foreign = "\(scratch.path)/FormDataKit-\(Self.deadPID)-foreign"
            try Self.makeStorageLike(foreign)
            #expect(chown(foreign, 65534, 65534) == 0)
            expectedKept.append(foreign)
        }
        let removed = TemporaryStorage.sweepStaleDirectories(in: scratch.path)
        #expect(removed.isEmpty)
        for dir in expectedKept {
            #expect(FileManager.default.fileExists(atPath: dir + "/body-1-abc"), "\(dir) was swept")
        }
    }

    @Test("A stale directory (lock free) is swept, whatever its pid says; a lock-less one is left alone")
    func staleSwept() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let dead = "\(scratch.path)/FormDataKit-\(Self.deadPID)-stale"
        // Its pid part names a running process (a reused pid, or one in another pid namespace):
        // the free lock says it is stale.
        let reused = "\(scratch.path)/FormDataKit-\(getppid())-reused"
        // No lock file: made by an older version, or a process between mkdir and its lock. Kept.
        let lockless = "\(scratch.path)/FormDataKit-\(Self.deadPID)-lockless"
        let unrelated = "\(scratch.path)/unrelated-\(Self.deadPID)"
        try Self.makeStorageLike(dead)
        try Self.makeStorageLike(reused)
        try Self.makeStorageLike(lockless, lockFile: false)
        try Self.makeStorageLike(unrelated)
        let removed = TemporaryStorage.sweepStaleDirectories(in: scratch.path)
        #expect(removed.sorted() == [dead, reused].sorted())
        #expect(!Self.exists(dead))
        #expect(!Self.exists(reused))
        #expect(FileManager.default.fileExists(atPath: lockless + "/body-1-abc"))
        #expect(FileManager.default.fileExists(atPath: unrelated + "/body-1-abc"))
    }

    @Test("A subdirectory is not descended into: the directory's flat files go, the rest stays")
    func subdirectoryNotDescended() throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let dir = "\(scratch.path)/FormDataKit-\(Self.deadPID)-nested"
        try Self.makeStorageLike(dir)
        try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: false)
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/sub/inner"))
        let outside = try scratch.write("outside.txt", "keep")
        #expect(symlink(outside, dir + "/link") == 0)
        let removed = TemporaryStorage.sweepStaleDirectories(in: scratch.path)
        // FormDataKit never makes subdirectories: such a directory is not removed whole.
        #expect(removed.isEmpty)
        #expect(!Self.exists(dir + "/body-1-abc"))
        #expect(!Self.exists(dir + "/link"))
        #expect(FileManager.default.fileExists(atPath: dir + "/sub/inner"))
        #expect(FileManager.default.fileExists(atPath: outside))
    }

    @Test(
        "A directory whose lock another process holds is not swept, even if its pid is dead",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "needs flock(1) (util-linux)"))
    func heldLockNotSwept() async throws {
        let scratch = try Scratch()
        defer { scratch.cleanup() }
        let dir = "\(scratch.path)/FormDataKit-\(Self.deadPID)-held"
        try Self.makeStorageLike(dir)
        let lock = dir + "/" + Self.lockName
        // flock(1) holds the lock while `cat` runs; `cat` ends when its stdin is closed.
        let holder = try SpawnedProcess("/usr/bin/flock", ["-x", lock, "cat"], stdin: .pipe, stdout: .null, stderr: .null)
        defer { holder.signal(SIGKILL) }
        try await Self.waitUntilHeld(lock)

        #expect(TemporaryStorage.sweepStaleDirectories(in: scratch.path).isEmpty)
        #expect(FileManager.default.fileExists(atPath: dir + "/body-1-abc"), "a live directory was swept")

        // Once the holder ends, the same directory is stale.
        try holder.standardInput!.close()
        #expect(await holder.wait().succeeded)
        #expect(TemporaryStorage.sweepStaleDirectories(in: scratch.path) == [dir])
        #expect(!Self.exists(dir))
    }

    /// Waits until someone else holds `path`'s flock, looking every 10 ms: up to a minute, since
    /// the holder is a `flock(1)` child that a machine whose cores are busy can take seconds to
    /// start (10 s was the bound before).
    static func waitUntilHeld(_ path: String) async throws {
        for _ in 0..<6000 {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                let taken = flock(fd, LOCK_EX | LOCK_NB) == 0
                close(fd)  // releases it again when taken
                if !taken { return }
            }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        Issue.record("flock(1) never took \(path)")
    }

    @Test("This process's directory holds its lock, and the sweep leaves it alone")
    func ownDirectoryLocked() throws {
        let own = try TemporaryStorage.directory()
        let fd = open(own + "/" + Self.lockName, O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0, "no lock file in \(own)")
        if fd >= 0 {
            #expect(flock(fd, LOCK_EX | LOCK_NB) == -1, "the lock is not held")
            close(fd)
        }
        let base = (own as NSString).deletingLastPathComponent
        #expect(!TemporaryStorage.sweepStaleDirectories(in: base).contains(own))
        #expect(FileManager.default.fileExists(atPath: own))
        #expect(TemporaryStorage.currentFiles().allSatisfy { !$0.hasSuffix("/" + Self.lockName) })
    }

    @Test("The cached directory is checked before reuse: changed mode or a symlink in its place → a new one")
    func cachedDirectoryRecheckedBeforeReuse() async throws {
        // In a child process: it replaces this process's own directory.
        try await Isolation.run(case: "recheck") {
            let first = try TemporaryStorage.directory()
            #expect(chmod(first, 0o755) == 0)
            // Given up on, it is no longer swept (not 0700) nor removed at exit: this test removes it.
            defer { try? FileManager.default.removeItem(atPath: first) }
            let (file, fd) = try TemporaryStorage.makeFile(purpose: "recheck")
            close(fd)
            let second = try TemporaryStorage.directory()
            #expect(second != first, "a directory whose mode changed was reused")
            #expect((file.path as NSString).deletingLastPathComponent == second)
            var info = stat()
            #expect(lstat(second, &info) == 0 && info.st_mode & 0o7777 == 0o700)
            file.remove()

            // Moved away and replaced by a symlink to a directory someone else picked.
            let decoy = try Scratch()
            defer { decoy.cleanup() }
            #expect(rename(second, second + "-moved") == 0)
            defer { try? FileManager.default.removeItem(atPath: second + "-moved") }
            #expect(symlink(decoy.path, second) == 0)
            defer { unlink(second) }
            let (other, otherFD) = try TemporaryStorage.makeFile(purpose: "recheck")
            close(otherFD)
            defer { other.remove() }
            let third = try TemporaryStorage.directory()
            #expect(third != second)
            #expect((other.path as NSString).deletingLastPathComponent == third)
            #expect(try FileManager.default.contentsOfDirectory(atPath: decoy.path).isEmpty)
        }
    }
}
