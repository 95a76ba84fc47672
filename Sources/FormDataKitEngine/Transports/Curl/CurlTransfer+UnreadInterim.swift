import FormDataKitBody
import FormDataKitWire
import CCurl

/// A resumable upload's interim answers that libcurl closed its connection without reading
/// (``UnreadAtClose``): reported when the exchange ends, as libcurl would have reported them.
extension CurlTransfer {
    /// libcurl begins this transfer's request on the connection between these two ends: a
    /// resumable upload watches it.
    func requestBegins(localAddress: String, localPort: Int, remoteAddress: String, remotePort: Int) {
        if let watchedConnection { _ = UnreadAtClose.shared.take(watchedConnection) }
        let connection = UnreadAtClose.Connection(
            localAddress: localAddress, localPort: localPort, remoteAddress: remoteAddress, remotePort: remotePort)
        UnreadAtClose.shared.watch(connection)
        watchedConnection = connection
    }

    /// The exchange ended with `code`: when libcurl failed it before a final answer, the complete
    /// interim heads left unread on its connection (a `104` with the upload's URL) are reported
    /// first, in order. Called on the event loop's thread, before the end is reported.
    func reportUnreadInterimResponses(code: Int32) {
        guard let connection = watchedConnection else { return }
        watchedConnection = nil
        let left = UnreadAtClose.shared.take(connection)
        guard code != CurlCode.ok, !answeredSinceRequestBegan, !left.isEmpty else { return }
        for head in Self.completeInterimHeads(in: left) {
            for line in head { line.withUnsafeBytes { _ = receiveHeader($0) } }
        }
    }

    /// The complete interim (1xx, not 101) heads at the start of `bytes`, each as its lines (the
    /// empty line that ends it included); parsing stops at anything else.
    static func completeInterimHeads(in bytes: [UInt8]) -> [[ArraySlice<UInt8>]] {
        var heads: [[ArraySlice<UInt8>]] = []
        var start = 0
        headLoop: while start < bytes.count {
            var lines: [ArraySlice<UInt8>] = []
            var lineStart = start
            while let newline = bytes[lineStart...].firstIndex(of: 0x0A) {
                let line = bytes[lineStart...newline]
                lines.append(line)
                lineStart = newline + 1
                let content = line.count - (line.count >= 2 && line[newline - 1] == 0x0D ? 2 : 1)
                if lines.count == 1 {
                    guard isInterimStatusLine(line) else { break headLoop }
                } else if content == 0 {
                    heads.append(lines)
                    start = lineStart
                    continue headLoop
                }
            }
            break  // an incomplete head
        }
        return heads
    }

    /// Whether `line` is `HTTP/x.y 1xx …` (not `101`).
    private static func isInterimStatusLine(_ line: ArraySlice<UInt8>) -> Bool {
        guard line.starts(with: "HTTP/".utf8), let space = line.firstIndex(of: 0x20) else { return false }
        let code = line[(space + 1)...].prefix(3)
        guard code.count == 3, code.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), code.first == 0x31 else { return false }
        return !code.elementsEqual("101".utf8)
    }
}
