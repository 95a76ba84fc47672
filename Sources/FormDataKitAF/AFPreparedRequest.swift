import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLRequest` turned into what the transport sends: final headers (no Content-Length — the
/// transport derives it; a `User-Agent` when it has none) and the body in the form the transport takes, by FormDataKit's one
/// policy (`BodyDelivery`): the multipart parts themselves for a transport that streams, bytes
/// in memory up to the transport's in-memory limit, else a spooled temporary file.
struct AFPreparedRequest {
    /// What the transport sends.
    var request: TransportRequest
    /// The temporary file the body was spooled or compressed to; removed when the task ends.
    var spooledBody: TemporaryFile?

    /// Prepares `urlRequest` for `transport`; `additionalHeaders` (a session configuration's) fill
    /// in headers it lacks. A multipart body stream's parts stay alive (the request holds its
    /// source) while the task runs.
    /// With `compressing`, the body goes gzip-compressed (`Content-Encoding: gzip`), compressed
    /// in one pass from its parts (nothing is spooled uncompressed): in memory up to
    /// `BodyDelivery.defaultInMemoryLimit` of body, from a temporary file beyond.
    init(
        _ urlRequest: URLRequest, additionalHeaders: [AnyHashable: Any]?, for transport: any FormDataTransport,
        compressing: Bool = false
    ) throws {
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
        // AFNetworking's serializer sets a User-Agent on Apple platforms only, and FormDataKit's
        // transports add none: a request without one (any, on Linux) gets FormDataRequest's.
        if !headers.contains(where: { $0.name.caseInsensitiveCompare("User-Agent") == .orderedSame }) {
            headers.append(("User-Agent", FormDataRequest.defaultUserAgentString))
        }
        // The serializer checks the headers it sets; per-request and session headers added
        // afterwards are checked here, before anything is spooled or sent.
        try RequestHeaderValidation.requireValid(headers)
        var source: BodySource
        var uploadLimit: UInt64 = 0
        if let stream = urlRequest.httpBodyStream as? AFMultipartBodyStream {
            source = stream.bodySource
            // AF's throttleBandwidth(withPacketSize:delay:), as a bytes-per-second limit the
            // transport applies (CurlTransport; the others do not limit, as before).
            if stream.delay > 0, transport.capabilities.contains(.bandwidthLimit) {
                uploadLimit = UInt64(max(1, (Double(stream.numberOfBytesInPacket) / stream.delay).rounded()))
            }
        } else if let stream = urlRequest.httpBodyStream {
            source = BodySource(segments: [BodySegment(.bytes(try Self.drain(stream)))])
        } else if let data = urlRequest.httpBody {
            source = BodySource(segments: [BodySegment(.bytes(data))])
        } else {
            source = .empty
        }
        var body: TransportRequest.Body
        if compressing, source.length > 0,
            !headers.contains(where: { $0.name.caseInsensitiveCompare("Content-Encoding") == .orderedSame })
        {
            switch try BodyCompressor.compress(source, to: .automatic, purpose: "af-gzip") {
            case .memory(let data):
                body = .data(data)
            case .file(let file, let length):
                spooledBody = file
                let whole = BodySource(segments: [BodySegment(.file(FileRange(path: file.path, length: length, expectedFileSize: length)))])
                body = try BodyDelivery.deliver(
                    whole, to: transport.acceptedBodyForms, inMemoryLimit: transport.inMemoryBodyLimit,
                    spooled: file
                ).body
            }
            headers.append((name: "Content-Encoding", value: "gzip"))
        } else {
            let delivered = try BodyDelivery.deliver(
                source, to: transport.acceptedBodyForms,
                inMemoryLimit: transport.inMemoryBodyLimit, purpose: "af-upload")
            body = delivered.body
            spooledBody = delivered.temporaryFile
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
    /// Every byte of a caller's own body stream (the engine's reader).
    private static func drain(_ stream: InputStream) throws -> Data {
        do {
            return try InputStreamReading.readAll(stream)
        } catch InputStreamReading.Failure.readFailed(let message) {
            throw AFURLRequestSerializationError.inputStreamFailed(name: "(request body)", message: message)
        }
    }
}
