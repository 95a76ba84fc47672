import FormDataKitWire
import Foundation

/// A small file read whole (a client certificate, a key): a regular file only — a FIFO, a device,
/// a socket or a kernel file is ``FormDataError/notARegularFile(path:kind:)`` naming it, never a
/// read that waits for a writer or never ends. Call it where a file's wait is allowed (the reader
/// pool), never on a transport's event thread.
package enum WholeFileReading {
    /// The bytes of the regular file at `path`.
    /// - Throws: ``FormDataError/fileNotFound(path:)``, ``FormDataError/notARegularFile(path:kind:)``,
    ///   ``FormDataError/fileUnreadable(path:errno:)``, ``FormDataError/fileChanged(path:expectedSize:actualSize:)``.
    package static func read(_ path: String) throws(FormDataError) -> Data {
        let size = try FileInspection.regularFileSize(at: path)
        let file = try OpenedFileRange(FileRange(path: path, offset: 0, length: size, expectedFileSize: size))
        let count = Int(clamping: size)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 1)
        defer { bytes.deallocate() }
        var filled = 0
        while filled < count {
            let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled..<count]))
            guard got > 0 else { break }
            filled += got
        }
        return Data(bytes: bytes.baseAddress!, count: filled)
    }
}
