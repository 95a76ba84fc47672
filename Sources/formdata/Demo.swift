import ArgumentParser
import FormDataKit
import FormDataKitTesting
import Foundation

/// `formdata demo`: a receiver, a sample form sent to it, and what it parsed. Zero setup.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start an embedded receiver, send it a sample form (fields, a file, gzip), and show what it parsed.")

    @Flag(name: .long, inversion: .prefixedNo, help: "Compress the request body with gzip.")
    var gzip = true

    @Option(
        name: .long,
        help:
            "The transport: curl, urlsession or asynchttpclient (a build with the AsyncHTTPClient trait). Default: curl on Linux, urlsession elsewhere."
    )
    var transport: TransportChoice = .platformDefault

    func run() async throws {
        let receiver = try await FormReceiver.start()
        print("Receiver listening on \(receiver.baseURL.absoluteString) (sending with \(transport.rawValue))")
        do {
            try await transport.withTransport(pinnedCertificate: nil) { transport in
                try await send(to: receiver, with: transport)
            }
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    private func send(to receiver: FormReceiver, with transport: any FormDataTransport) async throws {
        let sample = try SampleFile.make()
        defer { sample.remove() }

        let request = FormDataRequest(url: receiver.url("/upload"))
        request.transport = transport
        request.setPostValue("Ada Lovelace", forKey: "name")
        request.setPostValue("Grüße aus FormDataKit ✓", forKey: "message")
        request.setPostValue(42, forKey: "answer")
        try request.addFile(sample.path, withFileName: "notes.txt", andContentType: "text/plain", forKey: "attachment")
        request.shouldCompressRequestBody = gzip
        request.shouldLogDebugBody = true
        request.userAgentString = "formdata-demo"

        print("\n── Debug body log (what FormDataKit builds; written to standard error) ──")
        fflush(nil)
        let response: FormDataResponse
        do {
            response = try await request.start()
        } catch {
            print("\nThe request failed: \(error)")
            throw ExitCode.failure
        }
        fflush(nil)

        print("\n── What the receiver parsed ──")
        if let received = receiver.lastRequest {
            print(received.terminalSummary)  // escaped: a client cannot write terminal escapes
        }
        print("\n── Local file ──")
        print("  notes.txt: \(sample.size) bytes, sha256 \(sample.sha256)")
        if let file = receiver.lastRequest?.form?.file("attachment") {
            print("  receiver's copy matches: \(file.sha256 == sample.sha256 && file.size == sample.size ? "yes" : "NO")")
        }
        print("\n── Response ──")
        print(ResponseOutput.head(response), terminator: "")
        print(Self.pretty(response.body) ?? response.string ?? "<\(response.body.count) bytes>")
        print("\nUpload progress: \(request.uploadProgress.fractionCompleted * 100)% of \(request.uploadProgress.totalUnitCount) bytes")
    }
}

extension Demo {
    /// `data` as indented JSON, when it is JSON.
    static func pretty(_ data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data),
            let text = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        else { return nil }
        return String(decoding: text, as: UTF8.self)
    }
}

/// A small text file for the demo, in the system temporary directory.
struct SampleFile {
    let path: String
    let size: Int
    let sha256: String

    static func make() throws -> SampleFile {
        var text = "FormDataKit demo attachment\n"
        for line in 1...200 { text += "Line \(line): the quick brown fox jumps over the lazy dog — ünïcødé ✓\n" }
        let data = Data(text.utf8)
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("formdata-demo-\(getpid()).txt")
        try data.write(to: URL(fileURLWithPath: path))
        return SampleFile(path: path, size: data.count, sha256: SHA256.hex(data))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
