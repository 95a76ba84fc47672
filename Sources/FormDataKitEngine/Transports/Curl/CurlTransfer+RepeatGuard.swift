import FormDataKitBody
import FormDataKitWire
import CCurl

/// libcurl sends a request again by itself, on a new connection, when the connection it reused
/// dies before any answer ("Connection died, retrying a fresh connect") — after the server may
/// have read and processed it (measured: a POST processed twice, reported as a success). A
/// request not safe to repeat (a POST, PATCH… without `Idempotency-Key`) keeps connection reuse
/// (its speed on many small sends) and is guarded instead:
/// - it reuses only a connection idle for less than a second (`CURLOPT_MAXAGE_CONN`), so a
///   connection a server closes at its keep-alive timeout (seconds) is not picked as it closes;
/// - a second request begun with no final answer to the first (`CURLOPT_PREREQFUNCTION`,
///   libcurl 7.80+) ends the transfer: a connection failure after sending, which a retry policy
///   repeats only for a request with a key.
/// With a libcurl older than 7.80 (no pre-request callback) such a request goes on a fresh
/// connection (`CURLOPT_FRESH_CONNECT`), as ASIHTTPRequest sent every POST.
extension CurlTransfer {
    /// Has libcurl report each request it begins for this transfer (the pre-request callback),
    /// with the guard (see the extension's documentation) when `guardsRepeats`, and for a
    /// resumable upload's connection watch (``requestBegins(localAddress:localPort:remoteAddress:remotePort:)``);
    /// called while preparing.
    func watchRequestsBeginning(
        easy: UnsafeMutableRawPointer, guardsRepeats: Bool, set: (Int32, Int) -> Void, check: (Int32, Int32) -> Void
    ) {
        guard ccurl_easy_setopt_prereq_callback(easy, CurlOption.prereqFunction, curlPrereqCallback) == CurlCode.ok else {
            if guardsRepeats { set(CurlOption.freshConnect, 1) }
            return
        }
        check(CurlOption.prereqData, ccurl_easy_setopt_pointer(easy, CurlOption.prereqData, Unmanaged.passUnretained(self).toOpaque()))
        self.guardsRepeats = guardsRepeats
        if guardsRepeats { set(CurlOption.maxAgeConnection, 1) }
    }

    /// libcurl is about to send a request of this transfer on a connection: the first, or one
    /// after a final answer (an authentication round), goes; a guarded repeat of an unanswered one
    /// does not.
    fileprivate func requestWillBegin(
        localIP: UnsafePointer<CChar>?, localPort: Int32, primaryIP: UnsafePointer<CChar>?, primaryPort: Int32
    ) -> Int32 {
        guard connectionCarriesVersion() else { return CurlCallbackValue.prereqAbort }
        if guardsRepeats && requestsBegun > 0 && !answeredSinceRequestBegan {
            refusedRepeat = true
            return CurlCallbackValue.prereqAbort
        }
        requestsBegun += 1
        answeredSinceRequestBegan = false
        if request.network.resumesInterruptedUploads {
            requestBegins(
                localAddress: localIP.map { String(cString: $0) } ?? "", localPort: Int(localPort),
                remoteAddress: primaryIP.map { String(cString: $0) } ?? "", remotePort: Int(primaryPort))
        }
        return CurlCallbackValue.prereqOK
    }
}

/// The pre-request callback: `userdata` is the transfer (unretained, as for the other callbacks).
private let curlPrereqCallback: ccurl_prereq_callback = { userdata, primaryIP, localIP, primaryPort, localPort in
    guard let userdata else { return CurlCallbackValue.prereqAbort }
    return Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        .requestWillBegin(localIP: localIP, localPort: localPort, primaryIP: primaryIP, primaryPort: primaryPort)
}
