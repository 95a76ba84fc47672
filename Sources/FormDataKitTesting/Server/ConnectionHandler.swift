import Foundation
import NIOCore
import NIOHTTP1

/// One connection's requests, after NIOHTTP1 decoded them (`HTTPServerPipelineHandler` in front
/// of it delivers one request at a time): checks each head against ``FramingRules``, keeps the
/// deadlines and the body limit, hands the body to the handler's thread through a
/// ``BodyReader`` (pausing the socket when it is full), and writes the answer.
///
/// Deadlines (``LoopbackHTTPServer/Configuration``): from the moment the connection opens, or
/// the previous answer went out, the whole request head must arrive within `headDeadline`;
/// while the body arrives, the client may be silent for at most `bodyIdleDeadline` (not counted
/// while the server itself is not reading). Past either, the client gets 408 and the connection
/// is closed; a connection that sent nothing since it opened or since its last answer is closed
/// without one.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Phase {
        /// Waiting for a request head.
        case idle
        /// The head came; the body is arriving into the reader.
        case body(BodyReader)
        /// The body is complete; the handler's thread is working on the answer.
        case handling
        /// An answer went out with `Connection: close`; everything else is dropped.
        case closing
    }

    private let configuration: LoopbackHTTPServer.Configuration
    private let handlerThreads: HandlerThreads
    private let handler: LoopbackHTTPServer.Handler
    private let log: LoopbackHTTPServer.Log
    private let socketWriter: SocketWriter
    private var context: ChannelHandlerContext?
    private var phase = Phase.idle
    private var timer: Scheduled<Void>?
    private var paused = false
    private var readPending = false
    private var bodyBytes: Int64 = 0
    private var keepAlive = true
    private var minorVersion = 1
    /// Counts requests, so that an answer from a handler thread matches the request it is for.
    private var requestNumber = 0
    /// ``SocketWriter/bytesReceived`` when the head deadline was armed.
    private var bytesReceivedWhenIdle: Int64 = 0

    init(
        configuration: LoopbackHTTPServer.Configuration, socketWriter: SocketWriter, handlerThreads: HandlerThreads,
        handler: @escaping LoopbackHTTPServer.Handler,
        log: @escaping LoopbackHTTPServer.Log
    ) {
        self.configuration = configuration
        self.socketWriter = socketWriter
        self.handlerThreads = handlerThreads
        self.handler = handler
        self.log = log
    }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { armTimer(.head) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        armTimer(.head)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        if case .body(let reader) = phase { reader.fail("the client closed the connection") }
        phase = .closing
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard case .idle = phase else { return }
            receiveHead(head, context: context)
        case .body(let buffer):
            guard case .body(let reader) = phase else { return }
            bodyBytes += Int64(buffer.readableBytes)
            guard bodyBytes <= configuration.maxBodyBytes else {
                reader.fail("the body is over the server's limit")
                refuse(.text(413, "request body over \(configuration.maxBodyBytes) bytes"), context: context)
                return
            }
            if reader.append(Data(buffer.readableBytesView)) {
                paused = true
                timer?.cancel()
            } else {
                armTimer(.bodyIdle)
            }
        case .end:
            guard case .body(let reader) = phase else { return }
            timer?.cancel()
            reader.finish()
            phase = .handling
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if case .body(let reader) = phase { reader.fail("\(error)") }
        switch phase {
        case .idle, .body:
            if let parserError = error as? HTTPParserError {
                let status = parserError == .headerOverflow ? 431 : 400
                refuse(.text(status, "malformed request (\(parserError))"), context: context)
                return
            }
        case .handling, .closing:
            break
        }
        phase = .closing
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if paused {
            readPending = true
        } else {
            context.read()
        }
    }

    // MARK: - One request

    private func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        timer?.cancel()
        requestNumber += 1
        minorVersion = head.version.minor
        keepAlive = head.isKeepAlive
        let headers = head.headers.map { (name: $0.name, value: $0.value) }
        if let rejection = FramingRules.check(minorVersion: head.version.minor, headers: headers) {
            log("refused \(head.method.rawValue) request: \(rejection.reason) (\(rejection.status), connection closed)")
            refuse(.text(rejection.status, rejection.reason), context: context)
            return
        }
        if let length = head.headers.first(name: "Content-Length").flatMap({ Int64($0) }), length > configuration.maxBodyBytes {
            refuse(.text(413, "request body over \(configuration.maxBodyBytes) bytes"), context: context)
            return
        }
        let request = LoopbackHTTPServer.Request(
            method: head.method.rawValue, target: head.uri, version: "HTTP/1.\(head.version.minor)", headers: headers)
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let reader = BodyReader { loopBound.eventLoop.execute { loopBound.value.resume() } }
        phase = .body(reader)
        bodyBytes = 0
        armTimer(.bodyIdle)
        if head.headers.first(name: "Expect")?.lowercased() == "100-continue" {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
        }
        let handler = self.handler
        let number = requestNumber
        handlerThreads.run {
            let response: LoopbackHTTPServer.Response?
            do {
                let answer = try handler(request, reader)
                try reader.drain()
                response = answer
            } catch {
                response = nil  // the body broke off, or the handler gave up: nothing to answer
            }
            return { loopBound.eventLoop.execute { loopBound.value.answer(response, request: number) } }
        }
    }

    /// The handler's thread is done with request `number`: writes its answer (or closes when
    /// there is none) and waits for the next request.
    private func answer(_ response: LoopbackHTTPServer.Response?, request number: Int) {
        guard let context, number == requestNumber, case .handling = phase else { return }
        guard let response else {
            phase = .closing
            context.close(promise: nil)
            return
        }
        // The next state first: writing the answer's end can hand over a pipelined request at once.
        let close = !keepAlive
        if close {
            phase = .closing
        } else {
            phase = .idle
            armTimer(.head)
        }
        write(response, close: close, context: context)
    }

    /// Answers with `response` and `Connection: close`, then closes: output first, reading
    /// (and dropping) what the client still sends for a moment, so that unread bytes do not
    /// make the kernel reset the connection before the client has read the answer.
    private func refuse(_ response: LoopbackHTTPServer.Response, context: ChannelHandlerContext) {
        if case .closing = phase { return }
        phase = .closing
        paused = false
        timer?.cancel()
        write(response, close: true, context: context)
        if readPending {
            readPending = false
            context.read()
        }
    }

    private func write(_ response: LoopbackHTTPServer.Response, close: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        for (name, value) in response.headers
        where name.caseInsensitiveCompare("Content-Length") != .orderedSame && name.caseInsensitiveCompare("Connection") != .orderedSame {
            headers.add(name: name, value: value)
        }
        headers.add(name: "Content-Length", value: String(response.body.count))
        if close {
            headers.add(name: "Connection", value: "close")
        } else if minorVersion == 0 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        let head = HTTPResponseHead(
            version: HTTPVersion(major: 1, minor: 1), status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        guard close else { return }
        written.whenComplete { [channel = context.channel, linger = configuration.lingerSeconds] _ in
            SocketWriter.closeLingering(channel, linger: linger)
        }
    }

    /// Reading stopped at the reader's high-water mark and the handler has taken its bytes.
    private func resume() {
        guard paused, let context else { return }
        paused = false
        if case .body = phase { armTimer(.bodyIdle) }
        if readPending {
            readPending = false
            context.read()
        }
    }

    // MARK: - Deadlines

    private enum Deadline {
        case head
        case bodyIdle
    }

    private func armTimer(_ deadline: Deadline) {
        timer?.cancel()
        guard let context else { return }
        let seconds = deadline == .head ? configuration.headDeadline : configuration.bodyIdleDeadline
        if deadline == .head { bytesReceivedWhenIdle = socketWriter.bytesReceived }
        let number = requestNumber
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
            loopBound.value.deadlinePassed(deadline, request: number)
        }
    }

    private func deadlinePassed(_ deadline: Deadline, request number: Int) {
        guard let context, number == requestNumber else { return }
        switch (deadline, phase) {
        case (.head, .idle) where socketWriter.bytesReceived == bytesReceivedWhenIdle:
            // An idle keep-alive connection (or one never used): closed without an answer, as
            // servers close idle connections. A 408 could be read as the answer to a request the
            // client sends at this very moment; a close makes it retry on a new connection.
            log("closed a connection idle for \(configuration.headDeadline) s")
            phase = .closing
            context.close(promise: nil)
            return
        case (.head, .idle):
            log("dropped a client: no complete request head within \(configuration.headDeadline) s (408)")
            // No request is in flight for NIO's HTTP handlers, so the answer goes under them.
            phase = .closing
            socketWriter.writeAndClose(
                "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", linger: configuration.lingerSeconds)
            return
        case (.bodyIdle, .body(let reader)):
            reader.fail("the client sent nothing for \(configuration.bodyIdleDeadline) s")
            log("dropped a client: body idle for \(configuration.bodyIdleDeadline) s (408)")
        default:
            return
        }
        refuse(.text(408, "request timeout"), context: context)
    }
}

/// First in a connection's pipeline, under NIO's HTTP handlers: writes bytes straight to the
/// socket, for the one answer that is not a response to a request NIO's handlers know of (408 to
/// a client that never finished a request head), and counts the bytes the client sent (a
/// connection that sent nothing since its last answer is idle, not slow).
final class SocketWriter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var context: ChannelHandlerContext?
    /// Every byte the client has sent on this connection.
    private(set) var bytesReceived: Int64 = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytesReceived += Int64(unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes `text`, then closes the connection (see ``closeLingering(_:linger:)``).
    func writeAndClose(_ text: String, linger: Double) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer(string: text)))).whenComplete {
            [channel = context.channel] _ in Self.closeLingering(channel, linger: linger)
        }
    }

    /// Closes the output at once, and the whole connection `linger` seconds later: what the
    /// client still sends meanwhile is read and dropped, so that unread bytes do not make the
    /// kernel reset the connection before the client has read the answer.
    static func closeLingering(_ channel: any Channel, linger: Double) {
        channel.close(mode: .output, promise: nil)
        channel.eventLoop.scheduleTask(in: .milliseconds(Int64(linger * 1000))) { channel.close(promise: nil) }
    }
}
