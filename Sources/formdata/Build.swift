import ArgumentParser
import FormDataKit
import FormDataKitTesting
import Foundation

/// `formdata build`: build a form with the same `-F` syntax as `post`, without sending it, and
/// write it as a raw HTTP request capture (what `formdata diff` and `serve --record` use) or as
/// the bare body.
struct Build: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build a form body without sending it (a raw HTTP capture, or the body alone).",
        discussion: """
            Uses the same -F syntax as `post`. Writes a raw HTTP/1.1 request (request line, headers,
            body) to --out or standard output, so `formdata diff` can compare it with a capture
            recorded by `formdata serve --record`. --body-only writes just the body. --charset NAME
            writes the strings in that charset (FormDataRequest.stringEncoding = .iana(NAME)); a
            string it cannot represent is an error naming the field.
            """)

    @Option(name: .customShort("F"), help: "A form field: name=value or name=@path[;type=..][;filename=..].")
    var fields: [String] = []

    @Flag(name: .long, help: "Compress the body with gzip (Content-Encoding: gzip).")
    var gzip = false

    @Flag(name: .long, help: "Build application/x-www-form-urlencoded (no files).")
    var urlencoded = false

    @Option(
        name: .long,
        help:
            "The charset the names, values and file names are written in and `charset=` names: an IANA name (gb2312, gbk, shift_jis, windows-1251…; default utf-8)."
    )
    var charset: String?

    @Option(name: .long, help: "A fixed multipart boundary (default: random, ASIHTTPRequest's shape).")
    var boundary: String?

    @Option(name: .long, help: "The request target written in the capture's request line.")
    var url: String = "http://localhost/upload"

    @Flag(name: .long, help: "Write only the body, not the request line and headers.")
    var bodyOnly = false

    @Flag(name: .long, help: "Print the debug body log to standard error.")
    var debug = false

    @Option(name: .long, help: "Write to this file instead of standard output.")
    var out: String?

    func run() throws {
        guard let target = URL(string: url), let host = target.host else { throw ValidationError("Not a URL: \(url)") }
        let request = FormDataRequest(url: target)
        request.postFormat = urlencoded ? .urlEncoded : .multipartFormData
        if let charset {
            guard let encoding = String.Encoding.iana(charset) else {
                throw ValidationError(
                    "Unknown charset \(charset.debugDescription): give an IANA name this system converts (iconv -l lists them)")
            }
            request.stringEncoding = encoding
        }
        if let boundary { request.multipartBoundary = boundary }
        for field in fields { try FieldSpec.parse(field).add(to: request, urlencoded: urlencoded) }
        request.shouldCompressRequestBody = gzip
        request.shouldLogDebugBody = debug
        try request.buildPostBody()
        let body = try Self.wireBody(of: request)
        let output: Data
        if bodyOnly {
            output = body
        } else {
            var headers = [ReceivedHeader(name: "Host", value: host + (target.port.map { ":\($0)" } ?? ""))]
            for (name, value) in request.requestHeaders.sorted(by: { $0.key < $1.key }) {
                headers.append(ReceivedHeader(name: name, value: value))
            }
            let path = target.path.isEmpty ? "/" : target.path + (target.query.map { "?\($0)" } ?? "")
            output = RawHTTPRequest(method: request.requestMethod, target: path, headers: headers, body: body).serialized()
        }
        if let out {
            try output.write(to: URL(fileURLWithPath: out))
        } else {
            FileHandle.standardOutput.write(output)
        }
    }

    /// The bytes the request would send: compressed, spooled or in memory.
    static func wireBody(of request: FormDataRequest) throws -> Data {
        if let data = request.compressedPostBody { return data }
        if let path = request.compressedPostBodyFilePath ?? request.postBodyFilePath {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return request.postBody ?? Data()
    }
}
