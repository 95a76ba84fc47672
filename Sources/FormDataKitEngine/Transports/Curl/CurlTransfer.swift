import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

/// One HTTP exchange on one libcurl easy handle. Set up on any thread, then touched only by the
/// event loop's thread, where libcurl calls its callbacks; what arrives goes straight to the
/// exchange's ``CurlSend`` (the send driver keeps or drops it and enforces the limits).
///
/// A body is read from its ``BodySource`` ahead of libcurl, on the ``BodyReaderPool`` (never on
/// the event loop's thread: a slow file system must not hold every other send), into a bounded
/// ``BodyReadAhead``; libcurl's read callback only copies from it, and pauses the transfer while
/// it is empty.
///
/// When the transfer ends, its easy handle may be reset and kept by the event loop for the next
/// transfer (``detachHandleForReuse()``): a handle's setup is a large part of a small send.
final class CurlTransfer {
    let send: CurlSend
    let request: TransportRequest
    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutableRawPointer?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
    /// The C filter in front of the progress callback (it calls it only when more body went out).
    private let uploadProgress = UnsafeMutablePointer<ccurl_upload_progress>.allocate(capacity: 1)

    // Body (read by CurlTransfer+Upload.swift)
    let bodySource: BodySource?
    var readAhead: BodyReadAhead?
    /// Whether the read callback paused the transfer, waiting for the read-ahead.
    var pausedForBody = false
    /// Body bytes handed to libcurl (from the offset it last rewound to): what progress counts of
    /// a chunked body, whose bytes on the wire include the chunks' framing.
    var bodyBytesHandedOut: Int64 = 0
    /// The error that stopped reading the body (a file that changed or vanished).
    var bodyError: FormDataError?

    // Response
    /// Whether the write callback paused the transfer: the response's consumer is behind
    /// (``CurlSend/responseDemand``); ``resumeReceiving()`` continues it.
    var pausedForResponse = false
    /// What the demand runs when the consumer caught up: resumes this transfer on the loop's thread.
    var resumeReceivingCommand: (@Sendable () -> Void)?
    private(set) var statusCode = 0
    private(set) var reasonPhrase: String?
    private(set) var headerLines: [(name: String, value: String)] = []
    private var uploadReports: UploadProgressReports
    /// `Set-Cookie` lines in this exchange's responses (the jar is checked when there were any).
    private var setCookieLines = 0

    /// The `CURLAUTH_*` schemes this transfer may answer with (see ``CurlSend``); 0: no credentials.
    let authSchemes: Int
    /// The jar this transfer's cookies go to and come from (kept alive while the handle is).
    var cookieJar: CurlCookieJar?
    /// The file the jar is written to, if any.
    var cookieJarFile: String?
    /// Whether the handle may be reset for another transfer: not with an upload buffer over 128 KiB.
    private var reusable = false
    /// Requests libcurl has begun on a connection for this transfer, and whether a final answer
    /// (a status of 200 or more) arrived since the last began (``CurlTransfer/watchRequestsBeginning(easy:guardsRepeats:set:check:)``).
    var requestsBegun = 0
    var answeredSinceRequestBegan = false
    /// The transfer ended because libcurl would have sent an unsafe request a second time.
    var refusedRepeat = false
    /// The transfer ended because its connection did not choose the HTTP version asked for.
    var refusedVersion = false
    /// Whether a repeat of an unanswered request ends the transfer (``watchRequestsBeginning(easy:guardsRepeats:set:check:)``).
    var guardsRepeats = false
    /// The connection a resumable upload's request began on, watched (``UnreadAtClose``).
    var watchedConnection: UnreadAtClose.Connection?

    init(send: CurlSend, request: TransportRequest, authSchemes: Int) {
        self.send = send
        self.request = request
        self.authSchemes = authSchemes
        errorBuffer.initialize(repeating: 0, count: 256)
        bodySource = request.body.segments
        uploadReports = UploadProgressReports(bodyLength: request.body.knownLength.map { Int64(clamping: $0) } ?? .max)
    }

    deinit {
        readAhead?.cancel()
        if let watchedConnection { _ = UnreadAtClose.shared.take(watchedConnection) }
        if let easy { ccurl_easy_cleanup(easy) }
        if let headerList { ccurl_slist_free_all(headerList) }
        errorBuffer.deallocate()
        uploadProgress.deallocate()
    }

    /// The text libcurl left in the error buffer, if any.
    var errorText: String? {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? nil : text
    }

    /// Cleans the easy handle up now (a transfer its loop no longer takes back).
    func releaseHandle() {
        if let easy { ccurl_easy_cleanup(easy) }
        easy = nil
    }

    /// Hands the easy handle over for another transfer, reset to libcurl's defaults (its
    /// connection stays in the multi handle's cache); nil when it must be cleaned up instead.
    /// Call it on the event loop's thread once the handle is out of the multi handle and the
    /// transfer's results have been read.
    func detachHandleForReuse() -> UnsafeMutableRawPointer? {
        guard reusable, let easy else { return nil }
        // A reset keeps the share (and the cookies it brings): leave it first.
        if cookieJar != nil { _ = ccurl_easy_setopt_pointer(easy, CurlOption.share, nil) }
        ccurl_easy_reset(easy)
        self.easy = nil
        return easy
    }

    /// Configures `reused` (a reset handle) or a new easy handle (the head was checked by the
    /// send driver).
    /// - Throws: ``FormDataError/unableToCreateRequest(underlying:)`` when libcurl refuses an option.
    func prepare(
        configuration: CurlTransport.Configuration, reusing reused: UnsafeMutableRawPointer?, transfersInFlight: Int
    ) throws(FormDataError) {
        guard let easy = reused ?? ccurl_easy_init() else {
            throw .unableToCreateRequest(underlying: UnderlyingError(domain: "libcurl", code: 0, message: "curl_easy_init failed"))
        }
        self.easy = easy
        let context = Unmanaged.passUnretained(self).toOpaque()
        var failed: (option: Int32, code: Int32)?
        func check(_ option: Int32, _ code: Int32) { if code != CurlCode.ok && failed == nil { failed = (option, code) } }
        func set(_ option: Int32, _ value: Int) { check(option, ccurl_easy_setopt_long(easy, option, value)) }
        func set(_ option: Int32, string value: String) {
            // libcurl copies string options.
            check(option, value.withCString { ccurl_easy_setopt_pointer(easy, option, $0) })
        }
        set(CurlOption.url, string: request.url.absoluteString)
        set(CurlOption.protocolsString, string: "http,https")
        set(CurlOption.noSignal, 1)
        set(CurlOption.tcpNoDelay, 1)
        check(CurlOption.errorBuffer, ccurl_easy_setopt_pointer(easy, CurlOption.errorBuffer, errorBuffer))
        // Redirects are followed by the send driver (ASIHTTPRequest's rules), one exchange per
        // hop: libcurl's default (`FOLLOWLOCATION` off) is kept.
        if configuration.connectTimeout > 0 {
            set(CurlOption.connectTimeoutMS, Int(min(configuration.connectTimeout * 1000, Double(Int32.max))))
        }
        let defaultUploadBuffer = 64 << 10  // libcurl's
        var uploadBuffer = defaultUploadBuffer
        if configuration.uploadBufferSize > 0, let length = bodySource.map({ $0.knownLength ?? .max }) {
            // As ``CurlTransport/Configuration/uploadBufferSize`` says. A small body's whole length:
            // libcurl sends it after the head in one piece, not in 64 KiB pieces a round apart.
            let share = configuration.uploadBufferSize * 4 / (max(0, transfersInFlight) + 1)
            let whole = length <= CurlTransport.smallBodyLimit ? Int(length) : nil
            let wholeOrQuarter = whole.map { ($0 + 0x3FFF) & ~0x3FFF } ?? Int(clamping: length / 4)
            let wanted = min(wholeOrQuarter, share)
            uploadBuffer = max(defaultUploadBuffer, min(configuration.uploadBufferSize, wanted))
            // Setting it, even to the default, makes libcurl allocate the buffer anew.
            if uploadBuffer != defaultUploadBuffer { set(CurlOption.uploadBufferSize, uploadBuffer) }
        }
        reusable = uploadBuffer <= Int(CurlTransport.smallBodyLimit)
        // A resumed upload's append: on a connection of its own, so that libcurl never re-sends
        // it by itself (it rewinds and retries a request whose reused connection died before
        // any answer, which would repeat a stale Upload-Offset).
        if request.opensFreshConnection { set(CurlOption.freshConnect, 1) }
        // A resumable upload keeps little unsent in the kernel: a lost connection loses it.
        if request.network.resumesInterruptedUploads {
            check(
                CurlOption.sockoptFunction,
                ccurl_easy_limit_unsent(easy, CurlOption.sockoptFunction, CurlOption.sockoptData, CurlTransport.resumableUnsentLimit))
        }
        if let trust = configuration.trust {
            if !trust.certificates.isEmpty {
                let bundle = Data(trust.certificates.map(Self.pem(of:)).joined(separator: "\n").utf8)
                check(
                    CurlOption.caInfoBlob,
                    bundle.withUnsafeBytes {
                        ccurl_easy_setopt_blob(easy, CurlOption.caInfoBlob, $0.baseAddress, $0.count)
                    })
            }
            set(CurlOption.sslVerifyPeer, trust.allowsInvalidCertificates ? 0 : 1)
            set(CurlOption.sslVerifyHost, trust.allowsInvalidCertificates || !trust.validatesDomainName ? 0 : 2)
        }
        applyNetworkOptions(
            configuration: configuration, set: set, setString: { set($0, string: $1) },
            setOff: { check($0, ccurl_easy_setopt_off(easy, $0, $1)) },
            setPointer: { check($0, ccurl_easy_setopt_pointer(easy, $0, $1)) })
        // Decode whatever content encoding libcurl supports as the body arrives; the request's
        // own Accept-Encoding header (below) is what goes on the wire.
        set(CurlOption.acceptEncoding, string: "")

        check(CurlOption.writeFunction, ccurl_easy_setopt_data_callback(easy, CurlOption.writeFunction, curlWriteCallback))
        check(CurlOption.writeData, ccurl_easy_setopt_pointer(easy, CurlOption.writeData, context))
        check(CurlOption.headerFunction, ccurl_easy_setopt_data_callback(easy, CurlOption.headerFunction, curlHeaderCallback))
        check(CurlOption.headerData, ccurl_easy_setopt_pointer(easy, CurlOption.headerData, context))
        set(CurlOption.noProgress, 0)
        uploadProgress.initialize(to: ccurl_upload_progress(most_sent: 0, callback: curlProgressCallback, userdata: context))
        check(
            CurlOption.xferInfoFunction,
            ccurl_easy_set_upload_progress(easy, CurlOption.xferInfoFunction, CurlOption.xferInfoData, uploadProgress))

        // Every connection closes through the watch (it keeps the callback of the handle that
        // opened it); a resumable upload watches the connection its request begins on.
        check(
            CurlOption.closeSocketFunction,
            ccurl_easy_setopt_closesocket_callback(easy, CurlOption.closeSocketFunction, curlCloseSocketCallback))
        let method = request.method.uppercased()
        let keyed = request.header(IdempotencyKey.headerName) != nil
        let guards = !RetryPolicy.isSafeToRepeat(method: method, carriesIdempotencyKey: keyed)
        if guards || request.network.resumesInterruptedUploads || checksNegotiatedVersion {
            watchRequestsBeginning(easy: easy, guardsRepeats: guards, set: set, check: check)
        }
        var hasContentType = false
        var list: UnsafeMutableRawPointer?
        // The framing is the body's: Content-Length, or chunked for a length not known.
        for header in request.headers
        where !header.name.equalsIgnoringASCIICase("Content-Length") && !header.name.equalsIgnoringASCIICase("Transfer-Encoding") {
            if header.name.equalsIgnoringASCIICase("Content-Type") { hasContentType = true }
            list = CurlLibrary.appendHeader(name: header.name, value: header.value, to: list)
        }
        if let source = bodySource {
            set(CurlOption.post, 1)
            // A length not known: no size (-1) and the chunked header, never a guessed length.
            let size = source.knownLength.map { Int64(clamping: $0) } ?? -1
            check(CurlOption.postFieldSizeLarge, ccurl_easy_setopt_off(easy, CurlOption.postFieldSizeLarge, size))
            if size < 0 { list = ccurl_slist_append(list, "Transfer-Encoding: chunked") }
            check(CurlOption.readFunction, ccurl_easy_setopt_data_callback(easy, CurlOption.readFunction, curlReadCallback))
            check(CurlOption.readData, ccurl_easy_setopt_pointer(easy, CurlOption.readData, context))
            check(CurlOption.seekFunction, ccurl_easy_setopt_seek_callback(easy, CurlOption.seekFunction, curlSeekCallback))
            check(CurlOption.seekData, ccurl_easy_setopt_pointer(easy, CurlOption.seekData, context))
            startReadAhead(of: source, chunkSize: uploadBuffer, easy: easy)
            if method != "POST" { set(CurlOption.customRequest, string: request.method) }
            if !configuration.sendsExpectContinue { list = ccurl_slist_append(list, "Expect:") }
        } else if method == "GET" {
            set(CurlOption.httpGet, 1)
        } else if method == "HEAD" {
            set(CurlOption.noBody, 1)
        } else if method == "POST" {
            // An empty POST: `Content-Length: 0`, as the other transports send.
            set(CurlOption.post, 1)
            check(CurlOption.postFieldSizeLarge, ccurl_easy_setopt_off(easy, CurlOption.postFieldSizeLarge, 0))
        } else {
            set(CurlOption.customRequest, string: request.method)
        }
        // libcurl would add `Content-Type: application/x-www-form-urlencoded` to any POST.
        if !hasContentType && (bodySource != nil || method == "POST") { list = ccurl_slist_append(list, "Content-Type:") }
        headerList = list
        check(CurlOption.httpHeader, ccurl_easy_setopt_pointer(easy, CurlOption.httpHeader, list))
        if let failed {
            throw .unableToCreateRequest(
                underlying: UnderlyingError(
                    domain: "libcurl", code: Int(failed.code),
                    message: "option \(failed.option): \(CurlLibrary.describe(failed.code))"))
        }
    }

    // MARK: - Callbacks (on the event loop's thread, inside libcurl's calls)

    /// One header line: a status line starts a new head (a 100 Continue or an authentication
    /// round each have their own); an empty line ends it.
    func receiveHeader(_ raw: UnsafeRawBufferPointer) -> Int {
        // Byte-level: this runs for every header line of every response.
        let count = raw.count
        var end = count
        while end > 0, raw[end - 1] == 0x0A || raw[end - 1] == 0x0D { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: raw[0..<end])
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeRawBufferPointer(rebasing: line[range]), as: UTF8.self) }
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        if line.count >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {  // "HTTP/"
            // HTTP/x.y SP code [SP reason]
            var index = 5
            while index < line.count, !isBlank(line[index]) { index += 1 }
            while index < line.count, isBlank(line[index]) { index += 1 }
            var code = 0
            var digits = 0
            while index < line.count, line[index] >= 0x30, line[index] <= 0x39, digits < 3 {
                code = code * 10 + Int(line[index] - 0x30)
                index += 1
                digits += 1
            }
            statusCode = digits == 3 ? code : 0
            while index < line.count, isBlank(line[index]) { index += 1 }
            reasonPhrase = index < line.count ? text(index..<line.count) : nil
            headerLines.removeAll(keepingCapacity: true)
            headerLines.reserveCapacity(8)  // one allocation for a usual head, not one per doubling
        } else if line.isEmpty {
            if statusCode >= 200 {
                answeredSinceRequestBegan = true
                send.transferReceivedHead(head)
            } else if statusCode >= 100 {
                send.transferReceivedInformational(head)
            }
        } else if let colon = line.firstIndex(of: 0x3A) {
            var start = colon + 1
            var stop = line.count
            while start < stop, isBlank(line[start]) { start += 1 }
            while stop > start, isBlank(line[stop - 1]) { stop -= 1 }
            headerLines.append((name: text(0..<colon), value: text(start..<stop)))
            if colon == 10, Self.isSetCookie(UnsafeRawBufferPointer(rebasing: line[0..<10])) { setCookieLines += 1 }
        }
        return count
    }

    /// Whether a header name is `Set-Cookie`, in any case.
    private static func isSetCookie(_ name: UnsafeRawBufferPointer) -> Bool {
        zip(name, "set-cookie".utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    /// The exchange has ended (on the event loop's thread): the body's read-ahead is let go (its
    /// files are closed on the reader pool), the last bytes on the wire are reported, and when the responses set cookies the jar is checked against its limits.
    /// With a jar file, what writes it is returned instead: the loop runs it on the reader pool
    /// and completes the send after it.
    func exchangeEnded() -> CookieJarFileWrite? {
        readAhead?.cancel()
        readAhead = nil
        if let report = uploadReports.ended(now: SendTimer.now) {
            send.transferSentBody(totalBytesSent: report.total, increment: report.increment)
        }
        guard let cookieJar, setCookieLines > 0 else { return nil }
        guard let file = cookieJarFile else {
            cookieJar.transferEnded(setCookieLines: setCookieLines, file: nil)
            return nil
        }
        return CookieJarFileWrite(jar: cookieJar, setCookieLines: setCookieLines, file: file)
    }

    /// Whether the whole body (or none) is on the wire: the exchange waits for its answer.
    var bodyIsOnTheWire: Bool { uploadReports.onWire >= uploadReports.bodyLength }

    /// Progress: bytes of the body on the wire.
    fileprivate func progress(uploaded: Int64, downloaded: Int64) {
        let body = bodySource?.isLengthKnown == false ? min(uploaded, bodyBytesHandedOut) : uploaded
        if let report = uploadReports.sent(body, now: SendTimer.now) {
            send.transferSentBody(totalBytesSent: report.total, increment: report.increment)
        }
    }

    // MARK: - Response

    /// The response headers, a repeated name joined with `, `.
    var headers: [String: String] {
        var joined: [String: String] = [:]
        joined.reserveCapacity(headerLines.count)
        for (name, value) in headerLines {
            if let existing = joined[name] { joined[name] = existing + ", " + value } else { joined[name] = value }
        }
        return joined
    }

    /// The head of the response received.
    var head: TransportResponseHead {
        TransportResponseHead(statusCode: statusCode, headers: headers, reasonPhrase: reasonPhrase, httpVersion: negotiatedVersion)
    }

    /// The system error number of a failed connection, when libcurl kept one.
    var osErrno: Int {
        guard let easy else { return 0 }
        var value = 0
        _ = ccurl_easy_getinfo_long(easy, CurlInfo.osErrno, &value)
        return value
    }
}

// The C callbacks: `userdata` is the transfer (unretained; the event loop holds it while the
// handle is in the multi).

private let curlWriteCallback: ccurl_data_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return 0 }
    return Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue().receiveBody(buffer, count: size * count)
}

private let curlHeaderCallback: ccurl_data_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return 0 }
    let line = UnsafeRawBufferPointer(start: buffer, count: size * count)
    return Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue().receiveHeader(line)
}

private let curlProgressCallback: ccurl_xferinfo_callback = { userdata, _, downloaded, _, uploaded in
    guard let userdata else { return 0 }
    Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue().progress(uploaded: uploaded, downloaded: downloaded)
    return 0
}
