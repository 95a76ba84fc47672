import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

/// The Python werkzeug receiver (Support/form_server.py), started on 127.0.0.1 with a free port.
final class WerkzeugServer: Sendable {
    let server: PythonServer
    var port: Int { server.ports[0] }

    init() async throws {
        do {
            server = try await PythonServer(script: "form_server.py")
        } catch {
            throw TransportTestSupport.Failure(description: "form_server.py did not start (is werkzeug installed?): \(error)")
        }
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func stop() { server.stop() }
}

/// What form_server.py answers.
struct WerkzeugResult: Decodable {
    var method: String
    var content_length: String?
    var content_encoding: String?
    var body_bytes: Int
    var fields: [[String]]
    var files: [[FileValue]]

    enum FileValue: Decodable, Equatable {
        case text(String)
        case number(Int)
        case null

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let number = try? container.decode(Int.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
    }
}

@Suite("Interop: Python werkzeug parses what FormDataKit sends")
struct WerkzeugInteropTests {
    typealias Support = TransportTestSupport

    static let alphabet: [Character] = Array("abcXYZ019 -_.~!*'();:@&=+$,/?#[]%ÄöüßéñçøåЖжЯ中文字日本語한국어🙂🚀✓€")

    static func randomText(_ generator: inout some RandomNumberGenerator, maxLength: Int) -> String {
        let length = Int.random(in: 1...maxLength, using: &generator)
        return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// Names: non-ASCII welcome; no `"`, CR or LF (their escaping is the encoder's own test).
    static func randomName(_ generator: inout some RandomNumberGenerator, index: Int) -> String {
        let safe = alphabet.filter { !"\"%&=+#;[]?".contains($0) }
        let length = Int.random(in: 1...12, using: &generator)
        return "f\(index)_" + String((0..<length).map { _ in safe.randomElement(using: &generator)! })
    }

    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            var z = state
            z = (z ^ (z >> 33)) &* 0xff51afd7ed558ccd
            return z ^ (z >> 33)
        }
    }

    @Test("random forms (non-ASCII, binary files, gzip, URL-encoded) match field for field", arguments: 0..<6)
    func randomForms(seed: Int) async throws {
        // Starting and stopping the child process block: do both off the concurrency pool.
        let server = try await WerkzeugServer()
        var scratch: [ScratchFile] = []
        do {
            try await send(seed: seed, to: server, scratch: &scratch)
        } catch {
            scratch.forEach { $0.remove() }
            await Support.blocking { server.stop() }
            throw error
        }
        scratch.forEach { $0.remove() }
        await Support.blocking { server.stop() }
    }

    private func send(seed: Int, to server: WerkzeugServer, scratch: inout [ScratchFile]) async throws {
        var generator = SeededGenerator(state: UInt64(seed) &+ 0xC0FFEE)

        let urlEncoded = seed % 3 == 2
        let request = FormDataRequest(url: server.url("/upload"))
        request.shouldCompressRequestBody = seed % 2 == 1
        var expectedFields: [[String]] = []
        var expectedFiles: [[WerkzeugResult.FileValue]] = []
        for index in 0..<Int.random(in: 1...6, using: &generator) {
            let name = Self.randomName(&generator, index: index)
            let value = Self.randomText(&generator, maxLength: 40) + (index % 2 == 0 ? "\r\nsecond line" : "")
            request.addPostValue(value, forKey: name)
            expectedFields.append([name, value])
        }
        if !urlEncoded {
            for index in 0..<Int.random(in: 1...3, using: &generator) {
                let name = Self.randomName(&generator, index: 100 + index)
                let fileName = "d\(index)-" + Self.randomName(&generator, index: index) + ".bin"
                let size = Int.random(in: 0...300_000, using: &generator)
                if index % 2 == 0 {
                    let file = try Support.makeFile(size: size, seed: UInt64(seed * 10 + index + 1))
                    scratch.append(file)
                    try request.addFile(file.path, withFileName: fileName, andContentType: "application/octet-stream", forKey: name)
                    expectedFiles.append([
                        .text(name), .text(fileName), .text("application/octet-stream"), .number(size), .text(file.sha256),
                    ])
                } else {
                    let data = Support.randomData(size: size, seed: UInt64(seed * 10 + index + 1))
                    request.addData(data, withFileName: fileName, andContentType: "image/png", forKey: name)
                    expectedFiles.append([.text(name), .text(fileName), .text("image/png"), .number(size), .text(SHA256.hex(data))])
                }
            }
        }
        let response = try await request.start()
        #expect(response.statusCode == 200)
        let result = try JSONDecoder().decode(WerkzeugResult.self, from: response.body)
        #expect(result.fields == expectedFields)
        #expect(result.files == expectedFiles)
        #expect(result.content_length == String(result.body_bytes))
        #expect(result.content_encoding == (request.shouldCompressRequestBody ? "gzip" : nil))
    }
}
