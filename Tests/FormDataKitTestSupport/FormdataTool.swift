import Foundation

/// The package's `formdata` tool, for tests that run it as a user does: a child process.
package enum FormdataTool {
    /// The built tool (next to the test bundle, or in the package's .build/debug); nil when it
    /// has not been built.
    package static func url() -> URL? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("formdata"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug/formdata")
                .standardized,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `executable` with `arguments` to completion (waited for off the concurrency pool, see
    /// `SpawnedProcess`); its exit status and output (standard output and error together).
    package static func run(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = try SpawnedProcess(executable.path, arguments, stdout: .pipe, stderr: .sameAsOutput)
        let output = await SpawnedProcess.readToEnd(process.standardOutput!)
        let ended = await process.wait()
        return (ended.signalled ? 128 + ended.status : ended.status, String(decoding: output, as: UTF8.self))
    }
}
