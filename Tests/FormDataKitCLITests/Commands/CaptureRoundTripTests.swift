import FormDataKit
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import FormDataKitTestSupport
import Testing

/// The migration kit's acceptance test: `formdata serve --record` captures an upload made by
/// curl (an independent client) and the same form sent by `FormDataRequest`, and `formdata diff`
/// finds no differences between the two captures.
@Suite("serve --record + diff: curl -F against FormDataRequest")
struct CaptureRoundTripTests {
    /// Starts `formdata serve --port 0 --record directory` and returns the process and its base URL
    /// (read from its first line, on a thread of its own).
    private static func startServe(_ tool: URL, recording directory: URL) async throws -> (SpawnedProcess, URL) {
        let process = try SpawnedProcess(tool.path, ["serve", "--port", "0", "--record", directory.path], stdout: .pipe, stderr: .null)
        let line = String(decoding: await SpawnedProcess.readFirstLine(process.standardOutput!), as: UTF8.self)
        guard let range = line.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
            let url = URL(string: String(line[range]))
        else {
            await stop(process)
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "formdata serve printed \(line.debugDescription)"])
        }
        return (process, url)
    }

    @Test func curlCaptureAndFormDataRequestCaptureHaveNoDifferences() async throws {
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let curl = try #require(
            ["/usr/bin/curl", "/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "curl is needed (apt-get install curl)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "FormDataKit-capture-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("photo.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: photo)
        let note = directory.appendingPathComponent("note.txt")
        try Data("héllo\r\nworld".utf8).write(to: note)
        let captures = directory.appendingPathComponent("captures")

        let (serve, baseURL) = try await Self.startServe(tool, recording: captures)
        do {
            try await roundTrip(
                tool: tool, curl: curl, url: baseURL.appendingPathComponent("upload"),
                photo: photo, note: note, captures: captures)
        } catch {
            await Self.stop(serve)
            throw error
        }
        await Self.stop(serve)
    }

    /// Stops the `formdata serve` child (SIGTERM) and waits for it to exit.
    private static func stop(_ process: SpawnedProcess) async {
        process.signal(SIGTERM)
        _ = await process.wait()
    }

    private func roundTrip(tool: URL, curl: String, url: URL, photo: URL, note: URL, captures: URL) async throws {

        // 1. The independent client.
        let curlRun = try await FormdataTool.run(
            URL(fileURLWithPath: curl),
            [
                "-sS", "-o", "/dev/null", "-H", "Expect:", url.absoluteString,
                "-F", "first_name=Ben", "-F", "motto=ünïcödé & more", "-F", "photo=@\(photo.path)", "-F", "note=@\(note.path)",
            ])
        #expect(curlRun.status == 0, "\(curlRun.output)")

        // 2. The port.
        let request = FormDataRequest(url: url)
        request.setPostValue("Ben", forKey: "first_name")
        request.setPostValue("ünïcödé & more", forKey: "motto")
        try request.addFile(photo.path, forKey: "photo")
        try request.addFile(note.path, forKey: "note")
        request.transport = URLSessionTransport()
        request.timeOutSeconds = 60  // the machine running the tests may be busy
        let response = try await request.start()
        #expect(response.statusCode == 200)

        let curlCapture = captures.appendingPathComponent("0001-POST.http")
        let portCapture = captures.appendingPathComponent("0002-POST.http")
        // ASIFormDataRequest's multipart Content-Type carries charset=utf-8; curl's does not.
        let diff = try await FormdataTool.run(tool, ["diff", "--tolerate", "charset", curlCapture.path, portCapture.path])
        #expect(diff.status == 0)
        #expect(diff.output == "equivalent\n")

        // The same through the library: the charset parameter is the only difference.
        let curlSnapshot = try FormSnapshot(contentsOfCapture: curlCapture)
        #expect(curlSnapshot.fields.map(\.text) == ["Ben", "ünïcödé & more"])
        #expect(curlSnapshot.files.map(\.contentType) == ["image/jpeg", "text/plain"])
        #expect(
            curlSnapshot.differences(from: try FormSnapshot(contentsOfCapture: portCapture)).map(\.location) == [
                "content type parameter charset"
            ])
        #expect(snapshotsMatch(curlSnapshot, try FormSnapshot(request), tolerating: [.boundary, .charsetParameter]))

        // curl again, chunked: the capture keeps the chunked framing and reads back the same.
        let chunked = try await FormdataTool.run(
            URL(fileURLWithPath: curl),
            [
                "-sS", "-o", "/dev/null", "-H", "Expect:", "-H", "Transfer-Encoding: chunked", url.absoluteString,
                "-F", "first_name=Ben", "-F", "motto=ünïcödé & more", "-F", "photo=@\(photo.path)", "-F", "note=@\(note.path)",
            ])
        #expect(chunked.status == 0, "\(chunked.output)")
        let chunkedCapture = captures.appendingPathComponent("0003-POST.http")
        #expect(try RawHTTPRequest(contentsOf: chunkedCapture).header("Transfer-Encoding") == "chunked")
        let sameAgain = try await FormdataTool.run(tool, ["diff", curlCapture.path, chunkedCapture.path])
        #expect(sameAgain.output == "equivalent\n")

        // And a real difference is found, with exit status 1.
        let changed = FormDataRequest(url: url)
        changed.setPostValue("Bob", forKey: "first_name")
        changed.setPostValue("ünïcödé & more", forKey: "motto")
        try changed.addFile(photo.path, forKey: "photo")
        changed.transport = request.transport
        changed.timeOutSeconds = 60
        _ = try await changed.start()
        let failing = try await FormdataTool.run(
            tool,
            [
                "diff", "--tolerate", "charset", curlCapture.path,
                captures.appendingPathComponent("0004-POST.http").path,
            ])
        #expect(failing.status == 1)
        #expect(failing.output.contains("part 1 \"first_name\" content: A \"Ben\" ≠ B \"Bob\""))
        #expect(failing.output.contains("part 4 \"note\": A \"note\" file \"note.txt\" (text/plain)"))
    }
}
