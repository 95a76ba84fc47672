import FormDataKitWire

/// The files a send's build opened to check them, kept for the send's first read of each on
/// the same thread. A form's build checks every file part (still there, still a regular file of
/// the size it had when added) and its first read opens the file and checks it again; a curl
/// send reads a small body, or opens a larger one's files, right where it was built. Inside
/// ``collect(_:)`` the build opens each file and checks the open descriptor instead of a `stat`
/// of its path, and that read takes the descriptor (``take(path:expectedSize:)``) instead of
/// opening the file again: one walk of the path and one check per file and send instead of two.
///
/// A file the build cannot open is checked by its path as before (so its error is the one it
/// always was); what the send leaves untaken — a transport that reads elsewhere, a build that
/// failed — is closed when ``collect(_:)`` ends. Used on one thread only.
package final class FilesOpenedByBuild {
    /// The most files one build keeps open (as many as a body read from cached pages holds
    /// open, ``CachedPagesReadAhead/maximumFiles``): a form of thousands of file parts must not
    /// hold thousands of descriptors at once. The files after them are checked by their paths.
    package static let maximumFiles = 8

    private var files: [(path: String, size: UInt64, descriptor: Int32)] = []
    private var opened = 0
    private static let scope = ThreadScopedObject<FilesOpenedByBuild>()

    private init() {}

    /// Runs `work` (a send's build and start) with the files its build opens on this thread kept
    /// for its reads here; closes the ones left when it returns.
    package static func collect<T>(_ work: () throws -> T) rethrows -> T {
        let opened = FilesOpenedByBuild()
        defer {
            for file in opened.files { DeferredClose.close(file.descriptor, file: file.path) }
        }
        return try scope.run(with: opened, work)
    }

    /// The list of the ``collect(_:)`` the calling thread is in, or nil.
    package static var current: FilesOpenedByBuild? { scope.current }

    /// Opens the file at `path` and checks that it is a regular file: its size, or nil when it
    /// could not be opened or checked so (the caller then checks it by its path, and gets the
    /// error it always got). The descriptor is kept for ``take(path:expectedSize:)``.
    package func openAndCheck(_ path: String) -> UInt64? {
        if opened >= Self.maximumFiles { return nil }
        // A path the test seam makes wait is checked by its path, where the seam waits.
        if let seam = OpenedFileRange.openSeam.current, seam.blocks(path) { return nil }
        let descriptor = OpenedFileRange.openForReading(path)
        guard descriptor >= 0 else { return nil }
        opened += 1
        guard let size = try? FileInspection.regularFileSize(descriptor: descriptor, path: path) else {
            DeferredClose.close(descriptor, file: path)
            return nil
        }
        files.append((path, size, descriptor))
        return size
    }

    /// The descriptors kept and not yet taken.
    package var keptDescriptors: [Int32] { files.map(\.descriptor) }

    /// The descriptor the build opened for `path` when it had `expectedSize` bytes, for the
    /// caller to own (and close), or nil.
    package func take(path: String, expectedSize: UInt64) -> Int32? {
        guard let index = files.firstIndex(where: { $0.path == path && $0.size == expectedSize }) else { return nil }
        return files.remove(at: index).descriptor
    }
}
