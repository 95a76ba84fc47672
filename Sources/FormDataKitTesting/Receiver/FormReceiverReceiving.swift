#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

extension FormReceiver {
    /// How many bytes the request target and header fields take, as ``Limits/maxHeaderBytes``
    /// counts them.
    static func headBytes(of request: LoopbackHTTPServer.Request) -> Int {
        let target = request.encodedPath.utf8.count + request.encodedQuery.utf8.count
        return request.headers.reduce(request.method.utf8.count + target) {
            $0 + $1.name.utf8.count + $1.value.utf8.count + 4
        }
    }

    /// Compressed input is handed to the inflater this much at a time; inflation stops within
    /// the inflated piece (at most 256 KiB) that passes ``Limits/maxInflatedBytes`` or the
    /// budget.
    private static let inflateSlice = 4096

    /// Reads the whole body as a stream and describes it; with the status to answer when it broke
    /// one of the ``limits``. What it keeps to parse is reserved in ``budget`` first, the
    /// reservation added to `held` (given back by the caller once the request is answered).
    func receive(
        _ request: LoopbackHTTPServer.Request, body: BodyReader, keep: Bool, hash: Bool, record: Bool, held: inout Int
    ) throws -> (ReceivedRequest, Int?) {
        var rejection: Int?
        var failure: FormParseError?
        let headBytes = Self.headBytes(of: request)
        let headers: [ReceivedHeader]
        if headBytes > limits.maxHeaderBytes {
            headers = []
            rejection = 431
            failure = FormParseError(
                offset: 0,
                reason:
                    "The request target and header fields take \(headBytes) bytes, over the receiver's limit of \(limits.maxHeaderBytes) (not kept)"
            )
        } else {
            headers = request.headers.map { ReceivedHeader(name: $0.name, value: $0.value) }
        }
        let keep = keep && rejection == nil
        let gzip = request.header("Content-Encoding")?.lowercased().contains("gzip") ?? false
        var count = 0
        var rawHash = SHA256()
        var kept = KeptBody(
            keep: keep, contentType: request.header("Content-Type"), limit: keepLimit, inlineLimit: max(4096, limits.retainedFileBytes))
        var inflatedCount = 0
        let inflater: StreamInflater? = gzip && rejection == nil ? try? StreamInflater() : nil
        let recorder = record ? self.recorder?.begin(request) : nil
        let maxInflated = limits.maxInflatedBytes
        let budget = self.budget
        var overBudget = false
        /// Brings the reservation to what `kept` holds; false (nothing kept any more) when the
        /// budget cannot take it.
        func account() -> Bool {
            let now = kept.heldBytes
            if now < held {
                budget.release(held - now)
                held = now
            } else if now > held {
                guard budget.reserve(now - held) else {
                    kept.drop()
                    overBudget = true
                    return account()
                }
                held = now
            }
            return true
        }
        func budgetFailure(at offset: Int) -> FormParseError {
            FormParseError(
                offset: offset,
                reason:
                    "The body needs more than the receiver's budget of \(budget.total) bytes held at once by all requests to inflate and parse them (not parsed)"
            )
        }
        do {
            while let chunk = try body.next() {
                recorder?.write(chunk)
                if hash { rawHash.update(chunk) }
                if let inflater {
                    var start = chunk.startIndex
                    while start < chunk.endIndex, failure == nil {
                        let end = min(chunk.endIndex, start + Self.inflateSlice)
                        do {
                            try inflater.feed(chunk[start..<end], offset: count + (start - chunk.startIndex)) { piece -> Bool in
                                inflatedCount += piece.count
                                guard inflatedCount <= maxInflated else { return false }
                                kept.append(Data(piece))
                                return account() && !overBudget
                            }
                        } catch {
                            failure = error
                        }
                        if failure == nil, inflatedCount > maxInflated {
                            failure = FormParseError(
                                offset: count + (end - chunk.startIndex),
                                reason: "The gzip body inflates to more than the receiver's limit of \(maxInflated) bytes")
                            rejection = 413
                        } else if failure == nil, overBudget {
                            failure = budgetFailure(at: count + (end - chunk.startIndex))
                            rejection = 413
                        }
                        if failure != nil {
                            kept.drop()
                            _ = account()
                        }
                        start = end
                    }
                } else if failure == nil {
                    kept.append(chunk)
                    if !account() || overBudget {
                        failure = budgetFailure(at: count + chunk.count)
                        rejection = 413
                    }
                }
                count += chunk.count
            }
        } catch {
            recorder?.abandon()  // a body that broke off is not a capture
            throw error
        }
        var form: ParsedForm?
        if failure == nil, let inflater, !inflater.isFinished, count > 0 {
            failure = FormParseError(offset: count, reason: "The gzip body is truncated")
        }
        if failure == nil, keep, kept.complete, let contentType = request.header("Content-Type") {
            let body = kept.finish()
            // The parser sees the whole body only when nothing was left out of it.
            let whole = !gzip && !kept.reduced && !kept.notAForm
            let expected = whole ? request.header("Content-Length").flatMap { Int($0) } : nil
            if let parts = Self.partCountUpperBound(body, contentType: contentType, stoppingAbove: limits.maxParts),
                parts > limits.maxParts
            {
                failure = FormParseError(
                    offset: 0, reason: "The body has more than \(limits.maxParts) parts, the receiver's limit (not parsed)")
                rejection = 413
            } else {
                do {
                    form = try kept.patch(FormBodyParser.parse(body, contentType: contentType, expectedLength: expected))
                    if form == nil {
                        failure = FormParseError(offset: 0, reason: "The body's files do not line up with its parts (not parsed)")
                    }
                } catch {
                    failure = error
                }
            }
        }
        if let parsed = form {
            // The parsed form and the JSON answer made of it are held too, until it is answered.
            let cost = Self.answerCost(of: parsed)
            if budget.reserve(cost) {
                held += cost
            } else {
                form = nil
                failure = budgetFailure(at: count)
                rejection = 413
            }
        }
        kept.drop()
        if failure == nil, !gzip, let declared = request.header("Content-Length").flatMap({ Int($0) }), declared != count {
            failure = FormParseError(offset: count, reason: "Content-Length says \(declared) bytes but \(count) arrived")
        }
        let capturePath = recorder.flatMap { self.recorder?.finish($0) }
        let received = ReceivedRequest(
            method: request.method, path: request.path, headers: headers, bodyBytes: count,
            bodySHA256: hash ? rawHash.hexDigest : nil, inflatedBytes: gzip ? inflatedCount : nil,
            form: form, parseError: failure, capturePath: capturePath)
        return (received, rejection)
    }

    /// What answering with `form` holds beyond the kept body: its names and values, and the
    /// JSON answer's share for them, counted as JSON escapes them at most (a control byte takes
    /// 6, a quote, backslash or slash 2, any other byte 1) — a form of NUL bytes answers six
    /// times its size. File contents count three times (bytes, base64, slack).
    static func answerCost(of form: ParsedForm) -> Int {
        func escaped(_ text: String) -> Int {
            var count = text.utf8.count
            for byte in text.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x2F {
                count += byte < 0x20 ? 5 : 1
            }
            return count
        }
        var cost = 0
        for field in form.fields {
            cost += field.name.utf8.count + field.value.utf8.count + escaped(field.name) + escaped(field.value)
        }
        for file in form.files { cost += file.name.utf8.count + file.fileName.utf8.count + 3 * file.data.count }
        return cost
    }

    /// An upper bound on the number of parts in `body` of type `contentType`, counted from its
    /// delimiters without parsing (multipart: `--boundary` occurrences minus the closing one;
    /// URL-encoded: `&` separators plus one), and counting stops once it is over `limit`; nil for
    /// other content types.
    static func partCountUpperBound(_ body: Data, contentType: String, stoppingAbove limit: Int) -> Int? {
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let cap = limit < Int.max - 2 ? limit + 2 : Int.max
        switch mediaType {
        case "multipart/form-data":
            guard let boundary = FormBodyParser.parameter("boundary", in: contentType), !boundary.isEmpty else { return nil }
            return max(0, occurrences(of: Array("--\(boundary)".utf8), in: body, upTo: cap) - 1)
        case "application/x-www-form-urlencoded":
            return body.isEmpty ? 0 : occurrences(of: [UInt8(ascii: "&")], in: body, upTo: cap) + 1
        default:
            return nil
        }
    }

    /// How many times `needle` occurs in `body` without overlapping, counting at most `cap`.
    private static func occurrences(of needle: [UInt8], in body: Data, upTo cap: Int) -> Int {
        guard !needle.isEmpty else { return 0 }
        return body.withUnsafeBytes { (haystack: UnsafeRawBufferPointer) -> Int in
            guard let base = haystack.baseAddress else { return 0 }
            return needle.withUnsafeBytes { (pattern: UnsafeRawBufferPointer) -> Int in
                let first = Int32(needle[0])
                var found = 0
                var offset = 0
                // memchr finds each candidate first byte, memcmp checks the rest.
                while found < cap, haystack.count - offset >= pattern.count,
                    let hit = memchr(base + offset, first, haystack.count - offset - pattern.count + 1)
                {
                    let at = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + at, pattern.baseAddress!, pattern.count) == 0 {
                        found += 1
                        offset = at + pattern.count
                    } else {
                        offset = at + 1
                    }
                }
                return found
            }
        }
    }
}
