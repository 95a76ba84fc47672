import Foundation

/// Turns a received response into a ``FormDataResponse``: inflates a gzip body, and reports
/// 401/407 as ``FormDataError/authenticationNeeded(underlying:)`` as ASIHTTPRequest did.
package enum ResponseInflation {
    /// The response for `head` and the received `body`.
    package static func response(head: TransportResponseHead, body: Data) -> Result<FormDataResponse, FormDataError> {
        if head.statusCode == 401 || head.statusCode == 407 {
            return .failure(.authenticationNeeded(underlying: UnderlyingError(
                domain: "HTTP", code: head.statusCode, message: head.statusLine)))
        }
        var body = body
        // URLSession (libcurl on Linux) usually inflates by itself and leaves the header; only a
        // body that still starts with the gzip magic is inflated here.
        if let encoding = head.header("Content-Encoding"), encoding.lowercased().contains("gzip"),
            body.count >= 2, body[body.startIndex] == 0x1f, body[body.startIndex + 1] == 0x8b {
            switch inflate(body) {
            case .success(let inflated): body = inflated
            case .failure(let error): return .failure(.compression(underlying: error))
            }
        }
        return .success(FormDataResponse(statusCode: head.statusCode, headers: head.headers, body: body))
    }

    /// The largest inflated response accepted (a guard against decompression bombs): 1 GiB.
    static let outputLimit: UInt64 = 1 << 30

    /// `data` inflated, with at most ``outputLimit`` bytes of output.
    static func inflate(_ data: Data) -> Result<Data, FormDataError> {
        do throws(FormDataError) {
            let inflater = try GzipInflater(outputLimit: outputLimit)
            var out = Data()
            try inflater.decompress(data) { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
            try inflater.finish()
            return .success(out)
        } catch {
            return .failure(error)
        }
    }
}
