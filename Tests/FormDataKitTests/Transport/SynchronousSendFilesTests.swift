#if os(Linux)
@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import Testing
@testable import FormDataKit

/// A synchronous send's small body (up to 128 KiB) is read whole on the reader pool before its
/// exchange starts, and its files are closed there: none is open when `startSynchronous()` returns.
@Suite("Curl transport: a synchronous send leaves none of its files open")
struct SynchronousSendFilesTests {
    typealias Support = TransportTestSupport

    /// The paths of the process's open descriptors (`/proc/self/fd`).
    static func openPaths() -> Set<String> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") })
    }

    @Test("a 100 KiB form of three files sent with startSynchronous: none of its files is open when it returns, twenty times")
    func closedWhenItReturns() async throws {
        try await Support.withReceiver { receiver in
            let transport = CurlTransport()
            let files = try (0..<3).map { try Support.makeFile(size: 34_000, seed: 300 + UInt64($0), name: "own\($0).bin") }
            defer { files.forEach { $0.remove() } }
            let paths = Set(files.map(\.path))
            let url = receiver.url("/discard")
            let leftOpen = try await Support.blocking { () throws -> [String] in
                var leftOpen: [String] = []
                for round in 0..<20 {
                    let request = FormDataRequest(url: url)
                    request.transport = transport
                    for (index, file) in files.enumerated() { try request.addFile(file.path, forKey: "file\(index)") }
                    request.startSynchronous()
                    let open = Self.openPaths().intersection(paths)
                    if request.responseStatusCode != 200 || !open.isEmpty {
                        leftOpen.append(
                            "round \(round): status \(request.responseStatusCode), \(request.error.map { "\($0)" } ?? "no error"), open \(open.sorted())"
                        )
                    }
                }
                return leftOpen
            }
            #expect(leftOpen.isEmpty, "\(leftOpen)")
        }
    }
}
#endif
