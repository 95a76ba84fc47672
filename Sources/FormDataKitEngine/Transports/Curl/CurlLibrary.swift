import FormDataKitBody
import FormDataKitWire
import CCurl
import Foundation

/// libcurl, bound at run time (see the `CCurl` target): whether it loaded, and the option,
/// info and result numbers FormDataKit uses (libcurl's stable ABI values, from its `curl.h`).
enum CurlLibrary {
    /// Nil when libcurl is usable; otherwise why not (e.g. `libcurl.so.4` is missing).
    static let loadError: String? = {
        var buffer = [CChar](repeating: 0, count: 512)
        if ccurl_load(&buffer, buffer.count) == 0 { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Whether libcurl loaded.
    static var isAvailable: Bool { loadError == nil }

    /// libcurl's version text, e.g. `libcurl/7.88.1 OpenSSL/3.0.19 zlib/1.2.13 …`.
    static var version: String? { isAvailable ? String(cString: ccurl_version()) : nil }

    /// libcurl's text for result code `code`.
    static func describe(_ code: Int32) -> String { String(cString: ccurl_easy_strerror(code)) }

    /// `list` with the header line `name: value` appended (`name;` for an empty value: libcurl
    /// removes a header given as `name:`). The line is written on the stack for libcurl to copy,
    /// not into a new string per header and send. Names and values were validated (no NUL, CR or LF).
    static func appendHeader(name: String, value: String, to list: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        let nameCount = name.utf8.count
        let valueCount = value.utf8.count
        let count = nameCount + (valueCount == 0 ? 1 : 2 + valueCount) + 1
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { line in
            var at = 0
            func write(_ text: String) {
                at += UnsafeMutableBufferPointer(rebasing: line[at...]).initialize(from: text.utf8).1
            }
            write(name)
            write(valueCount == 0 ? ";" : ": ")
            write(value)
            line[at] = 0
            return line.baseAddress.flatMap { start in
                start.withMemoryRebound(to: CChar.self, capacity: count) { ccurl_slist_append(list, $0) }
            }
        }
    }
}

/// `CURLoption` numbers (type base + index, as `curl.h` computes them).
enum CurlOption {
    private static let long: Int32 = 0, objectPoint: Int32 = 10_000, functionPoint: Int32 = 20_000
    private static let offT: Int32 = 30_000, blob: Int32 = 40_000
    static let writeData = objectPoint + 1
    static let url = objectPoint + 2
    static let readData = objectPoint + 9
    static let errorBuffer = objectPoint + 10
    static let writeFunction = functionPoint + 11
    static let readFunction = functionPoint + 12
    static let httpHeader = objectPoint + 23
    static let headerData = objectPoint + 29
    static let customRequest = objectPoint + 36
    static let noProgress = long + 43
    static let noBody = long + 44
    static let post = long + 47
    static let xferInfoData = objectPoint + 57
    static let headerFunction = functionPoint + 79
    static let httpGet = long + 80
    static let freshConnect = long + 74
    static let forbidReuse = long + 75
    static let connectOnly = long + 141
    static let unixSocketPath = objectPoint + 231
    static let prereqFunction = functionPoint + 312
    static let sockoptFunction = functionPoint + 148
    static let sockoptData = objectPoint + 149
    static let closeSocketFunction = functionPoint + 208
    static let prereqData = objectPoint + 313
    static let noSignal = long + 99
    static let acceptEncoding = objectPoint + 102
    static let postFieldSizeLarge = offT + 120
    static let connectTimeoutMS = long + 156
    static let seekFunction = functionPoint + 167
    static let seekData = objectPoint + 168
    static let xferInfoFunction = functionPoint + 219
    static let uploadBufferSize = long + 280
    static let protocolsString = objectPoint + 318
    static let tcpNoDelay = long + 121
    static let sslVerifyPeer = long + 64
    static let sslVerifyHost = long + 81
    static let caInfoBlob = blob + 309
    static let sslCertBlob = blob + 291
    static let sslKeyBlob = blob + 292
    static let proxy = objectPoint + 4
    static let cookie = objectPoint + 22
    static let keyPassword = objectPoint + 26
    static let cookieFile = objectPoint + 31
    static let cookieJar = objectPoint + 82
    static let cookieList = objectPoint + 135
    static let maxAgeConnection = long + 288
    static let sslCertType = objectPoint + 86
    static let share = objectPoint + 100
    static let proxyType = long + 101
    static let httpAuth = long + 107
    static let proxyAuth = long + 111
    static let maxSendSpeedLarge = offT + 145
    static let username = objectPoint + 173
    static let password = objectPoint + 174
    static let proxyUsername = objectPoint + 175
    static let proxyPassword = objectPoint + 176
    static let pinnedPublicKey = objectPoint + 230
    static let httpVersion = long + 84
    static let pipeWait = long + 237
}

/// `CURL_HTTP_VERSION_*` values: of `CURLOPT_HTTP_VERSION`, and of `CURLINFO_HTTP_VERSION`.
enum CurlHTTPVersion {
    static let v1_0 = 1
    static let v1_1 = 2
    static let v2 = 3
    static let v2TLS = 4
    static let v2PriorKnowledge = 5
    static let v3 = 30

    /// The option's value for `version`.
    static func option(for version: HTTPVersion) -> Int {
        switch version {
        case .automatic: return v2TLS
        case .http1_1: return v1_1
        case .http2: return v2
        case .http2PriorKnowledge: return v2PriorKnowledge
        }
    }

    /// The version `CURLINFO_HTTP_VERSION` reported; nil for none.
    static func response(_ value: Int) -> ResponseHTTPVersion? {
        switch value {
        case v1_0: return .http1_0
        case v1_1: return .http1_1
        case v2: return .http2
        case v3: return .http3
        default: return nil
        }
    }
}

/// `CURLAUTH_*` bits and `CURLPROXY_*` values.
enum CurlAuth {
    static let basic = 1 << 0
    static let digest = 1 << 1
    static let negotiate = 1 << 2
    static let ntlm = 1 << 3
    /// `CURLAUTH_ANY` without the legacy `DIGEST_IE` bit: every scheme libcurl has, probed first.
    static let any = ~(1 << 4)
    /// The schemes answered when a server challenges after pre-emptive Basic, most secure first.
    static let challengeSchemes: [(bit: Int, name: String)] = [
        (negotiate, "Negotiate"), (ntlm, "NTLM"), (digest, "Digest"), (basic, "Basic"),
    ]

    static let proxyHTTP = 0
    static let proxySOCKS5Hostname = 7
}

/// `CURLINFO` numbers.
enum CurlInfo {
    private static let long: Int32 = 0x200000
    static let osErrno = long + 25
    static let httpVersion = long + 46
}

/// `CURLMoption` numbers.
enum CurlMultiOption {
    static let maxConnects: Int32 = 6
    static let maxHostConnections: Int32 = 7
    static let pipelining: Int32 = 3
    static let maxConcurrentStreams: Int32 = 16
    /// `CURLPIPE_MULTIPLEX`: HTTP/2 streams share a connection.
    static let multiplex = 2
}

/// `CURLcode` values FormDataKit tells apart.
enum CurlCode {
    static let ok: Int32 = 0
    static let unsupportedProtocol: Int32 = 1
    static let urlMalformat: Int32 = 3
    static let operationTimedOut: Int32 = 28
    static let tooManyRedirects: Int32 = 47
    static let badContentEncoding: Int32 = 61
}

/// Return values of libcurl callbacks.
enum CurlCallbackValue {
    /// From a read callback: end the transfer with `CURLE_ABORTED_BY_CALLBACK`.
    static let readAbort = 0x1000_0000
    /// From a read callback: nothing to send yet; the transfer waits for `curl_easy_pause(CONT)`.
    static let readPause = 0x1000_0001
    /// From a write callback: the bytes were not taken; the transfer stops receiving and libcurl
    /// hands them over again once unpaused (`CURL_WRITEFUNC_PAUSE`).
    static let writePause = 0x1000_0001
    /// `curl_easy_pause`'s bit that keeps receiving paused (`CURLPAUSE_RECV`).
    static let pauseReceive: Int32 = 1 << 0
    /// `curl_easy_pause`'s bit that keeps sending paused (`CURLPAUSE_SEND`).
    static let pauseSend: Int32 = 1 << 2
    static let seekOK: Int32 = 0
    static let seekFail: Int32 = 1
    /// From the pre-request callback: send the request (`CURL_PREREQFUNC_OK`), or fail the
    /// transfer with `CURLE_ABORTED_BY_CALLBACK` (`CURL_PREREQFUNC_ABORT`).
    static let prereqOK: Int32 = 0
    static let prereqAbort: Int32 = 1
}
