import FormDataKitBody
import FormDataKitWire
import Foundation

/// Keeps the body of the response a send answers with, inflating a gzip body as it arrives
/// when the transport did not decode it (bounded by the decompressed-size limit: a compressed
/// body is never held whole). Decoded bytes can also be handed on as they come (a response
/// written to a file, ASI's `dataReceivedBlock`), and then need not be kept.
struct ResponseBodyCollector {
    private(set) var body = Data()
    private let inflater: GzipInflater?
    /// Whether decoded bytes are kept in ``body``.
    private var keepsBody = true
    /// Whether decoded bytes are gathered for ``takeForwarded()``.
    private var forwards = false
    /// Decoded bytes not yet taken by ``takeForwarded()``.
    private var forwarded = Data()
    /// Bytes received, before any inflating.
    private var received = 0
    /// Why the body cannot be kept (the inflater could not be made).
    private var failure: FormDataError?

    /// A collector for the response with `head`; `transportDecodes`: the transport undoes content
    /// encodings itself, so bytes arrive decoded.
    init(head: TransportResponseHead, transportDecodes: Bool, decompressedLimit: UInt64) {
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
    init() { inflater = nil }

    /// This collector set to hand decoded bytes on (``takeForwarded()``), keeping them in
    /// ``body`` too only when `keepingBody`.
    /// - Parameter keepingBody: whether ``body`` still gets the bytes.
    /// - Returns: the collector, forwarding.
    func forwarding(keepingBody: Bool) -> ResponseBodyCollector {
        var copy = self
        copy.forwards = true
        copy.keepsBody = keepingBody
        return copy
    }

    /// The decoded bytes received since the last call (forwarding collectors only).
    /// - Returns: the bytes, possibly empty.
    mutating func takeForwarded() -> Data {
        defer { forwarded = Data() }
        return forwarded
    }

    /// Adds received bytes.
    /// - Throws: ``FormDataError/compression(underlying:)`` when the body does not inflate or
    ///   grows past the decompressed-size limit.
    mutating func append(_ data: Data) throws(FormDataError) {
        received += data.count
        if let failure { throw failure }
        guard let inflater else {
            keep(data)
            return
        }
        var out = Data()
        do throws(FormDataError) {
            _ = try inflater.decompress(data) { (piece) throws(FormDataError) in out.append(contentsOf: piece) }
        } catch {
            throw .compression(underlying: error)
        }
        keep(out)
    }

    private mutating func keep(_ decoded: Data) {
        if keepsBody { body.append(decoded) }
        if forwards { forwarded.append(decoded) }
    }

    /// The whole body, once the response ended.
    /// - Throws: ``FormDataError/compression(underlying:)`` for a gzip body cut short.
    mutating func finish() throws(FormDataError) -> Data {
        if let failure { throw failure }
        if let inflater, received > 0 {
            do throws(FormDataError) { try inflater.finish() } catch { throw .compression(underlying: error) }
        }
        return body
    }
}
