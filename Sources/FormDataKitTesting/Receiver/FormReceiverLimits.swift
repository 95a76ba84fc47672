import FormDataKit
import Foundation

extension FormReceiver {
    /// Bounds on what clients can make the receiver hold — connections, time, bytes — and on how
    /// much it remembers and records. Every one is configurable; the defaults are in the Reliability article's
    /// bounds table.
    public struct Limits: Sendable, Equatable {
        /// The largest inflated size of one `Content-Encoding: gzip` body; inflation stops as
        /// soon as it is passed (within 256 KiB) and the request is answered 413. Default 64 MiB.
        public var maxInflatedBytes: Int
        /// The most parts a form body may have (multipart parts, or URL-encoded pairs); a body
        /// with more is not parsed and is answered 413. Default 10 000.
        public var maxParts: Int
        /// The most bytes the request target and header fields (names, values and 4 bytes of
        /// separators each) may take; a request with more is answered 431. Default 32 KiB.
        public var maxHeaderBytes: Int
        /// The most requests the log (``FormReceiver/requests``) keeps; older ones are
        /// forgotten. Default 1000.
        public var logLimit: Int
        /// The most bytes (estimated: headers, fields, kept file bytes) the log keeps; the
        /// oldest requests are forgotten beyond it, except the newest one. Default 64 MiB.
        public var logByteLimit: Int
        /// The most file content bytes a logged request keeps, over all its files in body order;
        /// files beyond it keep only their size and SHA-256. Default 64 KiB.
        public var retainedFileBytes: Int
        /// The most connections open at once; one more is answered 503 and closed at once (the
        /// server goes on accepting). Default 512.
        public var maxConnections: Int
        /// Seconds a client has to send a whole request head, from the moment it connects or
        /// the previous answer went out; past it a client that has sent part of a head gets 408
        /// and is disconnected, and a connection that has sent nothing (an idle keep-alive
        /// connection) is closed without an answer. Default 30.
        public var headDeadline: Double
        /// Seconds a client may stay silent while it sends a body; past it the client gets 408
        /// and is disconnected. Default 30.
        public var bodyIdleDeadline: Double
        /// The largest body, on the wire; a larger one is answered 413 and the connection
        /// closed. Default 16 GiB (bodies stream through in bounded memory whatever their size).
        public var maxBodyBytes: Int
        /// The largest request (head and body) recorded as a capture; a larger one is not
        /// recorded (`formdata serve --record-max`). Default 256 MiB.
        public var maxCaptureBytes: Int
        /// The most bytes of captures one receiver writes; once its captures take this much it
        /// records no more (`formdata serve --record-total-max`). Default 4 GiB.
        public var maxRecordedBytes: Int
        /// The most bytes all the requests being handled at once may hold to inflate and parse
        /// their bodies (a URL-encoded body whole, a multipart body without file contents over
        /// ``retainedFileBytes``), across every connection; a request that would pass it stops
        /// inflating and keeping at once and is answered 413 naming it. The parsed form and the
        /// JSON answer made of it count too (as JSON escapes them at most: a form of NUL bytes
        /// answers six times its size), else the form is dropped and the answer is 413. Reserved
        /// as bytes are kept, given back when the request is answered (see
        /// ``FormReceiver/bufferedBytes``). Default 256 MiB.
        public var maxBufferedBytes: Int

        /// Limits with the given values (each defaulting to the value in ``default``).
        /// - Parameters:
        ///   - maxInflatedBytes: see ``maxInflatedBytes``.
        ///   - maxParts: see ``maxParts``.
        ///   - maxHeaderBytes: see ``maxHeaderBytes``.
        ///   - logLimit: see ``logLimit``.
        ///   - logByteLimit: see ``logByteLimit``.
        ///   - retainedFileBytes: see ``retainedFileBytes``.
        ///   - maxConnections: see ``maxConnections``.
        ///   - headDeadline: see ``headDeadline``.
        ///   - bodyIdleDeadline: see ``bodyIdleDeadline``.
        ///   - maxBodyBytes: see ``maxBodyBytes``.
        ///   - maxCaptureBytes: see ``maxCaptureBytes``.
        ///   - maxRecordedBytes: see ``maxRecordedBytes``.
        ///   - maxBufferedBytes: see ``maxBufferedBytes``.
        public init(
            maxInflatedBytes: Int = 64 << 20, maxParts: Int = 10_000, maxHeaderBytes: Int = 32 << 10,
            logLimit: Int = 1000, logByteLimit: Int = 64 << 20, retainedFileBytes: Int = 64 << 10,
            maxConnections: Int = 512, headDeadline: Double = 30, bodyIdleDeadline: Double = 30,
            maxBodyBytes: Int = 16 << 30, maxCaptureBytes: Int = 256 << 20, maxRecordedBytes: Int = 4 << 30,
            maxBufferedBytes: Int = 256 << 20
        ) {
            self.maxInflatedBytes = maxInflatedBytes
            self.maxParts = maxParts
            self.maxHeaderBytes = maxHeaderBytes
            self.logLimit = logLimit
            self.logByteLimit = logByteLimit
            self.retainedFileBytes = retainedFileBytes
            self.maxConnections = maxConnections
            self.headDeadline = headDeadline
            self.bodyIdleDeadline = bodyIdleDeadline
            self.maxBodyBytes = maxBodyBytes
            self.maxCaptureBytes = maxCaptureBytes
            self.maxRecordedBytes = maxRecordedBytes
            self.maxBufferedBytes = maxBufferedBytes
        }

        /// The defaults: 64 MiB inflated per request, 10 000 parts, 32 KiB of header fields, 1000 logged
        /// requests, 64 MiB of log, 64 KiB of file bytes per logged request, 512 connections,
        /// 30 s for a head, 30 s of body silence, 16 GiB of body, 256 MiB per capture, 4 GiB of
        /// captures, 256 MiB held to inflate and parse by all requests at once.
        public static let `default` = Limits()

        /// What the HTTP server enforces before the receiver sees a request.
        var serverConfiguration: LoopbackHTTPServer.Configuration {
            var configuration = LoopbackHTTPServer.Configuration()
            configuration.maxConnections = max(1, maxConnections)
            configuration.headDeadline = max(0.001, headDeadline)
            configuration.bodyIdleDeadline = max(0.001, bodyIdleDeadline)
            configuration.maxBodyBytes = Int64(max(0, maxBodyBytes))
            configuration.maxHeadBytes = max(64 << 10, maxHeaderBytes.multipliedReportingOverflow(by: 2).partialValue)
            return configuration
        }
    }
}
