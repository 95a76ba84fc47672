import FormDataKit
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
import Testing

/// `formdata serve --max-inflated` and `--max-buffered`: the receiver's inflation bounds on the
/// command line (issue 53).
@Suite("serve --max-inflated / --max-buffered: a gzip bomb is answered 413")
struct ServeInflationBudgetTests {
    @Test func bombAnswered413NamingTheFlagsLimit() async throws {
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let curl = try #require(
            ["/usr/bin/curl", "/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "curl is needed (apt-get install curl)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("FormDataKit-bomb-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // 32 MiB of zeros after `a=`, about 32 KB of gzip.
        var bomb = Data()
        let deflater = try GzipDeflater(level: 9)
        let sink: GzipDeflater.Sink = { bomb.append(contentsOf: $0) }
        try deflater.compress(Data("a=".utf8), into: sink)
        for _ in 0..<32 { try deflater.compress(Data(count: 1 << 20), into: sink) }
        try deflater.finish(into: sink)
        let bombFile = directory.appendingPathComponent("bomb.gz")
        try bomb.write(to: bombFile)

        let serve = try SpawnedProcess(
            tool.path, ["serve", "--port", "0", "--max-inflated", "1M", "--max-buffered", "2M"], stdout: .pipe, stderr: .null)
        defer {
            serve.signal(SIGTERM)
            _ = serve.waitBlocking(timeout: 60)
        }
        let line = String(decoding: await SpawnedProcess.readFirstLine(serve.standardOutput!), as: UTF8.self)
        let range = try #require(line.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression), "\(line)")
        let answerFile = directory.appendingPathComponent("answer.json")
        let run = try await FormdataTool.run(
            URL(fileURLWithPath: curl),
            [
                "-sS", "-o", answerFile.path, "-w", "%{http_code}", "-H", "Expect:", "-H", "Content-Encoding: gzip",
                "-H", "Content-Type: application/x-www-form-urlencoded", "--data-binary", "@\(bombFile.path)",
                "--max-time", "60",  // a hang fails here instead of holding the suite; the answer takes milliseconds
                String(line[range]) + "/upload",
            ])
        #expect(run.output.hasSuffix("413"), "\(run.output)")
        let described = try JSONDecoder().decode(ReceivedRequest.self, from: Data(contentsOf: answerFile))
        #expect(described.parseError?.reason.contains("\(1 << 20)") == true, "\(String(describing: described.parseError))")
        #expect((described.inflatedBytes ?? .max) <= (1 << 20) + (256 << 10))
    }
}
