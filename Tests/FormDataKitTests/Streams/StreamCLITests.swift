import Foundation
import FormDataKit
import FormDataKitTestSupport
import Testing

/// `formdata post -F 'file=@-'` streams standard input (chunked), `-F 'name=<-'` sends it as a
/// value; werkzeug reads them.
@Suite("formdata post from standard input")
struct StreamCLITests {
    static func post(_ arguments: [String], stdin: Data) async throws -> (status: Int32, output: String) {
        let tool = try #require(FormdataTool.url(), "build the formdata tool first (swift build)")
        let process = try SpawnedProcess(tool.path, ["post"] + arguments, stdin: .pipe, stdout: .pipe, stderr: .pipe)
        let input = process.standardInput!
        Thread.detachNewThread {
            input.write(stdin)
            try? input.close()
        }
        let output = await SpawnedProcess.readToEnd(process.standardOutput!)
        let ended = await process.wait()
        return (ended.status, String(decoding: output, as: UTF8.self))
    }

    @Test("-F file=@- streams standard input as a file part, chunked")
    func fileFromStdin() async throws {
        let bytes = TransportTestSupport.randomData(size: 300_000, seed: 3)
        try await StreamPeer.with(.werkzeug) { peer in
            let result = try await Self.post(
                [peer.url().absoluteString, "-F", "file=@-;type=application/x-raw", "-F", "a=b", "--transport", "curl"], stdin: bytes)
            #expect(result.status == 0, "\(result.output)")
            let parsed = try JSONDecoder().decode(StreamPeerResult.self, from: Data(result.output.utf8))
            #expect(parsed.te == ["chunked"])
            #expect(parsed.files == [["file", "-", "application/x-raw", String(bytes.count), SHA256.hex(bytes)]])
            #expect(parsed.fields == [["a", "b"]])
        }
    }

    @Test("-F name=<- sends standard input as a value field")
    func valueFromStdin() async throws {
        try await StreamPeer.with(.werkzeug) { peer in
            let result = try await Self.post(
                [peer.url().absoluteString, "-F", "note=<-", "--transport", "curl"], stdin: Data("from stdin".utf8))
            #expect(result.status == 0, "\(result.output)")
            let parsed = try JSONDecoder().decode(StreamPeerResult.self, from: Data(result.output.utf8))
            #expect(parsed.fields == [["note", "from stdin"]])
        }
    }
}
