import Foundation

/// Keeps the body of the response a send answers with, inflating a gzip body as it arrives
/// when the transport did not decode it (bounded by the decompressed-size limit: a compressed
/// body is never held whole).
package struct ResponseBodyCollector {
    package private(set) var body = Data()
    private let inflater: GzipInflater?
    /// Bytes received, before any inflating.
    private var received = 0
    /// Why the body cannot be kept (the inflater could not be made).
    private var failure: FormDataError?

    /// A collector for the response with `head`; `transportDecodes`: the transport undoes content
    /// encodings itself, so bytes arrive decoded.
    package init(head: TransportResponseHead, transportDecodes: Bool, decompressedLimit: UInt64) {
        let gzip = head.header("Content-Encoding")?.lowercased().contains("gzip") == true
        guard gzip && !transportDecodes else {
            inflater = nil
            return
        }
        do throws(FormDataError) {
            inflater = try GzipInflater(outputLimit: decompressedLimit)
        } catch {
            inflater = nil
            failure = .compression(underlying: error)
        }
    }

    /// A collector that keeps bytes as they come (a response with no body).
    package init() { inflater = nil }

    /// Adds received bytes.
    /// - Throws: ``FormDataError/compression(underlying:)`` when the body does not inflate or
    ///   grows past the decompressed-size limit.
    package mutating func append(_ data: Data) throws(FormDataError) {
        received += data.count
        if let failure { throw failure }
        guard let inflater else {
            body.append(data)
            return
        }
        var out = body
        body = Data()
        defer { body = out }
        do throws(FormDataError) {
            _ = try inflater.decompress(data) { (piece) throws(FormDataError) in out.append(contentsOf: piece) }
        } catch {
            throw .compression(underlying: error)
        }
    }

    /// The whole body, once the response ended.
    /// - Throws: ``FormDataError/compression(underlying:)`` for a gzip body cut short.
    package mutating func finish() throws(FormDataError) -> Data {
        if let failure { throw failure }
        if let inflater, received > 0 {
            do throws(FormDataError) { try inflater.finish() } catch { throw .compression(underlying: error) }
        }
        return body
    }
}
