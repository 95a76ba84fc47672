import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLRequest` turned into what the transport sends: final headers (no Content-Length — the
/// transport derives it) and a body in memory or in a spooled temporary file.
struct AFPreparedRequest {
    /// Multipart bodies held wholly in memory up to this size are sent from memory; larger ones,
    /// and any with file parts, are spooled to a temporary file and sent from it. Both ways the
    /// transport sends the exact Content-Length.
    static let inMemoryLimit: UInt64 = 1 << 20

    /// What the transport sends.
    var request: TransportRequest
    /// The temporary file a multipart body was spooled to; removed when the task ends.
    var spooledBody: TemporaryFile?

    /// Prepares `urlRequest`; `additionalHeaders` (a session configuration's) fill in headers it lacks.
    /// With `streaming` (a transport that streams a body source, such as AsyncHTTPClient's), a
    /// large multipart body goes to the transport unspooled; the request's body stream keeps
    /// its parts alive while the task runs.
    /// With `compressing`, the body goes gzip-compressed (`Content-Encoding: gzip`), in memory up
    /// to 1 MiB of output and from a temporary file beyond (FormDataKit's compressor).
    init(_ urlRequest: URLRequest, additionalHeaders: [AnyHashable: Any]?, streaming: Bool = false,
         compressing: Bool = false) throws {
        guard let url = urlRequest.url else { throw AFURLRequestSerializationError.invalidURLString("") }
        var headers: [(name: String, value: String)] = []
        for (name, value) in (urlRequest.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key })
        where name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            headers.append((name, value))
        }
        for (key, value) in additionalHeaders ?? [:] {
            let name = String(describing: key.base)
            if urlRequest.value(forHTTPHeaderField: name) == nil { headers.append((name, String(describing: value))) }
        }
        // The serializer checks the headers it sets; per-request and session headers added
        // afterwards are checked here, before anything is spooled or sent.
        try RequestHeaderValidation.requireValid(headers)
        var body: TransportRequest.Body
        var uploadLimit: UInt64 = 0
        if let stream = urlRequest.httpBodyStream as? AFMultipartBodyStream {
            let source = stream.bodySource
            // AF's throttleBandwidth(withPacketSize:delay:), as a bytes-per-second limit the
            // transport applies (CurlTransport; the others do not limit).
            if stream.delay > 0 {
                uploadLimit = UInt64(max(1, (Double(stream.numberOfBytesInPacket) / stream.delay).rounded()))
            }
            if source.isInMemory && source.length <= Self.inMemoryLimit {
                body = .data(try source.readAll())
            } else if streaming {
                body = .source(source)
            } else {
                let file = try withExtendedLifetime(stream) { try BodySpooler.spool(source, purpose: "af-upload") }
                spooledBody = file
                body = .file(path: file.path, length: source.length)
            }
        } else if let stream = urlRequest.httpBodyStream {
            body = .data(try Self.drain(stream))
        } else if let data = urlRequest.httpBody {
            body = .data(data)
        } else {
            body = .none
        }
        if compressing, body.length > 0,
            !headers.contains(where: { $0.name.caseInsensitiveCompare("Content-Encoding") == .orderedSame }) {
            let source = body.segments ?? .empty
            switch try BodyCompressor.compress(source, to: .automatic, purpose: "af-gzip") {
            case .memory(let data):
                body = .data(data)
            case .file(let file, let length):
                spooledBody?.remove() // the uncompressed spool is no longer needed
                spooledBody = file
                body = .file(path: file.path, length: length)
            }
            headers.append((name: "Content-Encoding", value: "gzip"))
        }
        request = TransportRequest(
            url: url, method: urlRequest.httpMethod ?? "GET", headers: headers, body: body,
            timeoutInterval: urlRequest.timeoutInterval)
        request.network.maximumUploadBytesPerSecond = uploadLimit
        // The URLRequest properties a transport can honour: timeoutInterval (above, the idle
        // timeout) and httpShouldHandleCookies (the curl transport's cookie jar). cachePolicy,
        // allowsCellularAccess, networkServiceType and httpShouldUsePipelining have nothing to
        // act on in these transports (no response cache, no cellular link).
        request.network.usesCookieJar = urlRequest.httpShouldHandleCookies
    }

    /// Every byte of a caller's own body stream.
    private static func drain(_ stream: InputStream) throws -> Data {
        if stream.streamStatus == .notOpen { stream.open() }
        defer { stream.close() }
        var data = Data()
        let size = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        while true {
            let got = stream.read(buffer, maxLength: size)
            if got < 0 {
                throw AFURLRequestSerializationError.inputStreamFailed(
                    name: "(request body)", message: stream.streamError.map { String(describing: $0) } ?? "read failed")
            }
            if got == 0 { break }
            data.append(buffer, count: got)
        }
        return data
    }
}
