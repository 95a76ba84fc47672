import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
import Testing
import FormDataKitTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transports a check runs over: the default one (curl on Linux) and URLSession.
enum AFTransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case defaultTransport, urlSession
    var testDescription: String { rawValue }
    var transport: any FormDataTransport {
        switch self {
        case .defaultTransport: FormDataRequest.defaultTransport
        case .urlSession: Self.sharedURLSession
        }
    }

    /// One URLSession transport for the suites that use this.
    static let sharedURLSession = URLSessionTransport()
}

/// Helpers shared by the adapter's tests.
enum TestSupport {
    /// Runs `body` with a fresh embedded receiver, stopped afterwards whatever `body` does.
    static func withReceiver<T>(_ body: (FormReceiver) async throws -> T) async throws -> T {
        let receiver = try await FormReceiver.start()
        let result: Result<T, any Error>
        do { result = .success(try await body(receiver)) } catch { result = .failure(error) }
        await receiver.stop()
        return try result.get()
    }

    /// The reference's fixed boundary (25 characters, AFNetworking's shape).
    static let boundary = "Boundary+0123456789ABCDEF"

    /// Every byte of `stream`, read the way a transport reads it (open, read until 0, close).
    static func drain(_ stream: InputStream, chunk: Int = 4096) throws -> Data {
        stream.open()
        defer { stream.close() }
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let got = stream.read(&buffer, maxLength: chunk)
            if got < 0 { throw stream.streamError ?? CocoaError(.fileReadUnknown) }
            if got == 0 { break }
            out.append(contentsOf: buffer[0..<got])
        }
        return out
    }

    /// The body of a multipart request built by FormDataKitAF.
    static func body(of request: URLRequest) throws -> Data {
        guard let stream = request.httpBodyStream else { throw CocoaError(.fileReadUnknown) }
        return try drain(stream)
    }

    /// A new empty directory for one test's files; remove it with `FileManager.removeItem`.
    static func makeDirectory() throws -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("FormDataKitAFTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `data` to `name` in `directory` and returns its URL.
    static func write(_ data: Data, named name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// The `"AFNetworking"` payload of the session-manager progress tests: repeated while its
    /// UTF-8 length is below 20000 (1667 times, 20004 bytes).
    static var progressPayload: String {
        var payload = ""
        while payload.utf8.count < 20000 { payload += "AFNetworking" }
        return payload
    }
}

/// A small strict multipart/form-data parser for the tests: checks the exact layout
/// (`--B CRLF part (CRLF --B CRLF part)* CRLF --B-- CRLF`, no preamble or epilogue) and returns
/// each part's headers in order and its content.
struct ParsedMultipart: Equatable {
    /// One part: its header lines in order, and its content.
    struct Part: Equatable {
        var headers: [(name: String, value: String)]
        var content: Data

        static func == (lhs: Part, rhs: Part) -> Bool {
            lhs.content == rhs.content && lhs.headers.map { "\($0.name): \($0.value)" } == rhs.headers.map { "\($0.name): \($0.value)" }
        }

        /// The value of header `name` (case-insensitive).
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The `name="…"` parameter of Content-Disposition.
        var name: String? { parameter("name") }
        /// The `filename="…"` parameter of Content-Disposition.
        var fileName: String? { parameter("filename") }

        private func parameter(_ key: String) -> String? {
            guard let disposition = header("Content-Disposition") else { return nil }
            for piece in disposition.components(separatedBy: "; ") {
                let prefix = "\(key)=\""
                if piece.hasPrefix(prefix), piece.hasSuffix("\"") {
                    return String(piece.dropFirst(prefix.count).dropLast())
                }
            }
            return nil
        }
    }

    var parts: [Part]

    /// Errors the parser reports.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses `body` with `boundary`.
    init(_ body: Data, boundary: String) throws {
        let bytes = [UInt8](body)
        let opening = Array("--\(boundary)\r\n".utf8)
        let separator = Array("\r\n--\(boundary)".utf8)
        let closing = Array("\r\n--\(boundary)--\r\n".utf8)
        guard bytes.starts(with: opening) else { throw Malformed(description: "no opening boundary") }
        guard bytes.count >= opening.count + closing.count, Array(bytes.suffix(closing.count)) == closing else {
            throw Malformed(description: "no closing boundary at the very end")
        }
        var parts: [Part] = []
        var index = opening.count
        while true {
            guard let end = Self.find(separator, in: bytes, from: index) else { throw Malformed(description: "unterminated part") }
            parts.append(try Self.parsePart(Array(bytes[index..<end])))
            let after = end + separator.count
            if bytes[after...].starts(with: Array("--\r\n".utf8)) {
                guard after + 4 == bytes.count else { throw Malformed(description: "epilogue after closing boundary") }
                break
            }
            guard bytes[after...].starts(with: Array("\r\n".utf8)) else { throw Malformed(description: "bad boundary line") }
            index = after + 2
        }
        self.parts = parts
    }

    private static func parsePart(_ bytes: [UInt8]) throws -> Part {
        var headers: [(name: String, value: String)] = []
        var index = 0
        while true {
            guard let lineEnd = find(Array("\r\n".utf8), in: bytes, from: index) else {
                throw Malformed(description: "unterminated header")
            }
            if lineEnd == index {
                index += 2
                break
            }
            let line = String(decoding: bytes[index..<lineEnd], as: UTF8.self)
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(description: "header without colon: \(line)") }
            let name = String(line[..<colon])
            var value = line[line.index(after: colon)...]
            guard value.first == " " else { throw Malformed(description: "header without space: \(line)") }
            value = value.dropFirst()
            headers.append((name, String(value)))
            index = lineEnd + 2
        }
        return Part(headers: headers, content: Data(bytes[index...]))
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count, start <= haystack.count - needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}

/// The form an independent parser (Python's werkzeug, in a subprocess) sees in a multipart body:
/// fields and files by name, in order.
struct WerkzeugForm: Decodable, Equatable {
    /// One file as werkzeug parsed it.
    struct File: Decodable, Equatable {
        var filename: String
        var contentType: String
        var base64: String

        enum CodingKeys: String, CodingKey {
            case filename, contentType = "content_type", base64
        }
    }

    var form: [[String]]
    var files: [[String: File]]

    /// Parses `body` (with `contentType`) with werkzeug. The child is waited for on threads of
    /// its own (`SpawnedProcess`), so the test does not block Swift concurrency's small thread
    /// pool (which the embedded receivers of other tests run on).
    static func parse(_ body: Data, contentType: String) async throws -> WerkzeugForm {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bodyURL = try TestSupport.write(body, named: "body", in: directory)
        let script = """
            import sys, json, base64, io
            from werkzeug.formparser import parse_form_data
            body = open(sys.argv[1], 'rb').read()
            env = {'REQUEST_METHOD': 'POST', 'CONTENT_TYPE': sys.argv[2], 'CONTENT_LENGTH': str(len(body)), 'wsgi.input': io.BytesIO(body)}
            stream, form, files = parse_form_data(env)
            out = {'form': [[k, v] for k, v in form.items(multi=True)],
                   'files': [{k: {'filename': f.filename, 'content_type': f.content_type, 'base64': base64.b64encode(f.read()).decode()}} for k, f in files.items(multi=True)]}
            print(json.dumps(out))
            """
        let result = try await SpawnedProcess.run("/usr/bin/env", ["python3", "-c", script, bodyURL.path, contentType])
        guard result.termination.succeeded else {
            throw ParsedMultipart.Malformed(description: "werkzeug failed: \(String(decoding: result.stderr, as: UTF8.self))")
        }
        return try JSONDecoder().decode(WerkzeugForm.self, from: result.stdout)
    }
}
