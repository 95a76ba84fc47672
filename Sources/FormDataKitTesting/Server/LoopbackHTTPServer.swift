import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The HTTP/1.1 server under ``FormReceiver`` and `formdata serve`: SwiftNIO's `NIOHTTP1`
/// (llhttp parses every request) on `NIOPosix` event loops, with the limits a server facing
/// untrusted clients needs (``Configuration``) and the framing rules of ``FramingRules``.
///
/// Threads, not the Swift concurrency pool: a receiver runs inside test processes whose pool
/// (one thread per core: two here) is shared by every test running at once; a receiver on it
/// waited 20-50 s for a thread. Sockets are served by NIO's event-loop threads (the process's
/// `MultiThreadedEventLoopGroup.singleton`, one per core); each request whose head has arrived
/// is handled on a thread of its own (blocking reads of its body, hashing, parsing), so at most
/// ``Configuration/maxConnections`` such threads exist, and an idle connection holds none.
package final class LoopbackHTTPServer: Sendable {
    /// The limits. Every one is configurable; the defaults are in the Reliability article's bounds table.
    package struct Configuration: Sendable, Equatable {
        /// The most connections open at once; one more is answered 503 and closed at once.
        package var maxConnections = 512
        /// Seconds for a whole request head to arrive (from the connection's start or the
        /// previous answer); past it the client gets 408 and is closed.
        package var headDeadline: Double = 30
        /// Seconds the client may be silent while it sends a body; past it, 408 and closed.
        package var bodyIdleDeadline: Double = 30
        /// The most bytes of header fields (llhttp's count: names and values) in a request
        /// head; a larger head is answered 431.
        var maxHeadBytes = 64 << 10
        /// The largest body; a larger one is answered 413 (as soon as its `Content-Length`
        /// says so, or when the bytes pass it) and the connection closed.
        package var maxBodyBytes: Int64 = 16 << 30
        /// The listen backlog.
        package var backlog: Int32 = 256
        /// Seconds a refused client may go on sending (read and dropped) before the connection
        /// is closed.
        var lingerSeconds: Double = 1

        package init() {}
    }

    /// The port it listens on.
    package let port: UInt16
    /// The limits it enforces.
    let configuration: Configuration
    private let serverChannel: any Channel
    private let connections: ConnectionRegistry

    private init(port: UInt16, configuration: Configuration, serverChannel: any Channel, connections: ConnectionRegistry) {
        self.port = port
        self.configuration = configuration
        self.serverChannel = serverChannel
        self.connections = connections
    }

    /// Listens on `host` (an IP address) and `port` (0: a free one) and starts accepting.
    /// - Parameters:
    ///   - host: the address to bind.
    ///   - port: the port; 0 picks a free one.
    ///   - configuration: the limits.
    ///   - log: where operator messages go (accept errors, refused and dropped clients).
    ///   - handler: answers each request, on a thread of its own.
    /// - Returns: the listening server.
    /// - Throws: what binding throws (an address in use, not an IP address).
    static func start(
        host: String, port: UInt16, configuration: Configuration = Configuration(), log: @escaping Log = { _ in },
        handler: @escaping Handler
    ) async throws -> LoopbackHTTPServer {
        let connections = ConnectionRegistry(limit: configuration.maxConnections, log: log)
        let bootstrap = makeBootstrap(configuration: configuration, connections: connections, log: log, handler: handler)
        let channel = try await bootstrap.bind(host: host, port: Int(port)).get()
        return LoopbackHTTPServer(
            port: UInt16(channel.localAddress?.port ?? Int(port)), configuration: configuration, serverChannel: channel,
            connections: connections)
    }

    /// ``start(host:port:configuration:log:handler:)`` for a caller outside Swift concurrency
    /// (blocks until it listens; never call it on an event-loop thread).
    /// - Parameters:
    ///   - host: the address to bind.
    ///   - port: the port; 0 picks a free one.
    ///   - configuration: the limits.
    ///   - log: where operator messages go.
    ///   - handler: answers each request, on a thread of its own.
    /// - Returns: the listening server.
    /// - Throws: what binding throws.
    package static func startBlocking(
        host: String, port: UInt16, configuration: Configuration = Configuration(), log: @escaping Log = { _ in },
        handler: @escaping Handler
    ) throws -> LoopbackHTTPServer {
        let connections = ConnectionRegistry(limit: configuration.maxConnections, log: log)
        let bootstrap = makeBootstrap(configuration: configuration, connections: connections, log: log, handler: handler)
        let channel = try bootstrap.bind(host: host, port: Int(port)).wait()
        return LoopbackHTTPServer(
            port: UInt16(channel.localAddress?.port ?? Int(port)), configuration: configuration, serverChannel: channel,
            connections: connections)
    }

    private static func makeBootstrap(
        configuration: Configuration, connections: ConnectionRegistry, log: @escaping Log, handler: @escaping Handler
    ) -> ServerBootstrap {
        // The server's own handler threads (reused from request to request).
        let handlerThreads = HandlerThreads()
        return ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: configuration.backlog)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                // Ahead of the AcceptBackoffHandler that ServerBootstrap adds after this: it sees
                // each accept error first, logs it and passes it on to the back-off.
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptErrorLogger(log: log))
                }
            }
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(
                ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16 << 10, maximum: 256 << 10)
            )
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard connections.admit(channel) else {
                        // Over the limit: a clean refusal, not a silent reset or a dead acceptor.
                        let refusal = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                        channel.writeAndFlush(ByteBuffer(string: refusal)).whenComplete { _ in channel.close(promise: nil) }
                        return
                    }
                    var limits = NIOHTTPDecoderLimitConfiguration()
                    limits.maxHeaderListSize = configuration.maxHeadBytes
                    limits.maxHeaderFieldSize = configuration.maxHeadBytes
                    let pipeline = channel.pipeline.syncOperations
                    let socketWriter = SocketWriter()
                    try pipeline.addHandler(socketWriter)
                    try pipeline.configureHTTPServerPipeline(
                        withPipeliningAssistance: true, withServerUpgrade: nil, withErrorHandling: false,
                        withOutboundHeaderValidation: true,
                        withEncoderConfiguration: HTTPResponseEncoder.Configuration(), withDecoderLimitConfiguration: limits)
                    try pipeline.addHandler(
                        ConnectionHandler(
                            configuration: configuration, socketWriter: socketWriter, handlerThreads: handlerThreads, handler: handler,
                            log: log))
                }
            }
    }

    /// How many connections are open now.
    var openConnections: Int { connections.count }

    /// Stops accepting and closes the open connections (requests being handled finish on their
    /// threads; their answers are dropped).
    func stop() async {
        try? await serverChannel.close()
        for channel in connections.closeAll() {
            try? await channel.close()
        }
    }

    /// ``stop()`` from synchronous code, safe on any thread: off an event-loop thread it is
    /// ``stopBlocking()``; on one (a SwiftNIO loop thread must never wait) it starts the closes
    /// and returns at once — they complete when that loop runs again.
    func stopFromAnyThread() {
        guard MultiThreadedEventLoopGroup.currentEventLoop != nil else { return stopBlocking() }
        serverChannel.close(promise: nil)
        for channel in connections.closeAll() { channel.close(promise: nil) }
    }

    /// Runs `body` on one of SwiftNIO's event-loop threads (those the receivers run on) and
    /// waits for it: for tests of what a call does there.
    /// - Parameter body: what to run on the loop.
    /// - Throws: what submitting to the loop throws (a loop that is shutting down).
    static func onEventLoop(_ body: @escaping @Sendable () -> Void) async throws {
        try await MultiThreadedEventLoopGroup.singleton.any().submit(body).get()
    }

    /// ``stop()`` for a caller outside Swift concurrency (blocks; never on an event-loop thread).
    package func stopBlocking() {
        try? serverChannel.close().wait()
        for channel in connections.closeAll() {
            try? channel.close().wait()
        }
    }
}

/// The open connections of one server: admits a new one while there are fewer than the limit,
/// forgets it when it closes, closes them all on stop.
private final class ConnectionRegistry: @unchecked Sendable {
    // `@unchecked`: the mutable state is guarded by `lock`.
    private let lock = NSLock()
    private var open: [ObjectIdentifier: any Channel] = [:]
    private var stopped = false
    private var refused = 0
    private var lastRefusalLog = Date.distantPast
    private let limit: Int
    private let log: LoopbackHTTPServer.Log

    init(limit: Int, log: @escaping LoopbackHTTPServer.Log) {
        self.limit = limit
        self.log = log
    }

    var count: Int { lock.withLock { open.count } }

    /// Whether `channel` may be served; if so, it is forgotten when it closes.
    func admit(_ channel: any Channel) -> Bool {
        let key = ObjectIdentifier(channel)
        let (admitted, message): (Bool, String?) = lock.withLock {
            if !stopped, open.count < limit {
                open[key] = channel
                return (true, nil)
            }
            refused += 1
            // At most one line a second, however many are refused.
            guard Date().timeIntervalSince(lastRefusalLog) >= 1 else { return (false, nil) }
            lastRefusalLog = Date()
            defer { refused = 0 }
            return (false, "refused \(refused) connection(s): \(open.count) open, the limit is \(limit) (503)")
        }
        if let message { log(message) }
        guard admitted else { return false }
        channel.closeFuture.whenComplete { _ in self.forget(key) }
        return true
    }

    private func forget(_ key: ObjectIdentifier) {
        lock.withLock { _ = open.removeValue(forKey: key) }
    }

    /// Refuses new connections from now on; the open ones, to close.
    func closeAll() -> [any Channel] {
        lock.withLock {
            stopped = true
            return Array(open.values)
        }
    }
}

/// On the listening socket: logs accept errors (EMFILE, ENFILE, ENOBUFS, …) before NIO's
/// `AcceptBackoffHandler` pauses accepting for a second and tries again — the server never stops
/// accepting because of one.
private final class AcceptErrorLogger: ChannelInboundHandler, Sendable {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let log: LoopbackHTTPServer.Log
    private let lastLog = LockedDate()

    init(log: @escaping LoopbackHTTPServer.Log) {
        self.log = log
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if lastLog.passedOneSecond() {
            log("accept failed: \(error); pausing accepts for 1 s, then accepting again")
        }
        context.fireErrorCaught(error)
    }
}

/// A time, to say something at most once a second.
private final class LockedDate: @unchecked Sendable {
    // `@unchecked`: `date` is guarded by `lock`.
    private let lock = NSLock()
    private var date = Date.distantPast

    /// Whether a second has passed since the last time this returned true.
    func passedOneSecond() -> Bool {
        lock.withLock {
            guard Date().timeIntervalSince(date) >= 1 else { return false }
            date = Date()
            return true
        }
    }
}
