import Foundation

/// Turns a received response into a ``FormDataResponse``: inflates a gzip body, and reports
/// 401/407 as ``FormDataError/authenticationNeeded(underlying:)`` as ASIHTTPRequest did.
package enum ResponseInflation {
    /// ``FormDataError/authenticationNeeded(underlying:)`` for a 401 or 407 `head`, naming the
    /// scheme (and realm) the challenge asks for, so "Digest" or "NTLM" tells what to give.
    package static func authenticationNeeded(_ head: TransportResponseHead) -> FormDataError {
        let challenge = head.header(head.statusCode == 407 ? "Proxy-Authenticate" : "WWW-Authenticate")
        let asked =
            challenge.map { value -> String in
                let realm = AuthenticationOutcome.realm(in: value).map { ", realm \"\($0)\"" } ?? ""
                return
                    " (\(head.statusCode == 407 ? "the proxy" : "the server") asks for \(AuthenticationOutcome.scheme(of: value))\(realm))"
            } ?? ""
        return .authenticationNeeded(underlying: UnderlyingError(domain: "HTTP", code: head.statusCode, message: head.statusLine + asked))
    }

    /// The response for `head` and the received `body`. `alreadyDecoded`: the transport undid
    /// the content encoding itself (libcurl), so the body is never inflated again here.
    package static func response(
        head: TransportResponseHead, body: Data,
        limit: UInt64 = TransportRequest.defaultMaximumDecompressedResponseSize,
        alreadyDecoded: Bool = false
    ) -> Result<FormDataResponse, FormDataError> {
        if head.statusCode == 401 || head.statusCode == 407 {
            return .failure(authenticationNeeded(head))
        }
        var body = body
        if alreadyDecoded {
            return .success(
                FormDataResponse(
                    statusCode: head.statusCode, headers: head.headers, body: body,
                    reasonPhrase: head.reasonPhrase))
        }
        // URLSession (libcurl on Linux) usually inflates by itself and leaves the header; only a
        // body that still starts with the gzip magic is inflated here.
        if let encoding = head.header("Content-Encoding"), encoding.lowercased().contains("gzip"),
            body.count >= 2, body[body.startIndex] == 0x1f, body[body.startIndex + 1] == 0x8b
        {
            switch inflate(body, limit: limit) {
            case .success(let inflated): body = inflated
            case .failure(let error): return .failure(.compression(underlying: error))
            }
        }
        return .success(FormDataResponse(statusCode: head.statusCode, headers: head.headers, body: body))
    }

    /// Whether a response with `head` carries a content encoding (its body is decoded, and so
    /// bounded by the decompressed-size limit).
    static func isEncoded(_ head: TransportResponseHead) -> Bool {
        guard let encoding = head.header("Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased() else {
            return false
        }
        return !encoding.isEmpty && encoding != "identity"
    }

    /// `data` inflated, with at most `limit` bytes of output.
    static func inflate(_ data: Data, limit: UInt64) -> Result<Data, FormDataError> {
        do throws(FormDataError) {
            let inflater = try GzipInflater(outputLimit: limit)
            var out = Data()
            try inflater.decompress(data) { (chunk) throws(FormDataError) in out.append(contentsOf: chunk) }
            try inflater.finish()
            return .success(out)
        } catch {
            return .failure(error)
        }
    }
}
