// A test-support server for resumable uploads: Apple's `HTTPResumableUploadHandler`
// (swift-nio-extras' NIOResumableUpload, interop versions 3, 5 and 6) in front of a plain upload
// handler that writes each completed upload's body to a file. It is the independent server the
// resumable-upload tests send to (we did not write the protocol side).
//
// Usage: ResumableUploadServer [--h2c] <directory> [<address>]
// Prints `PORT <n>` (a free port on <address>, 127.0.0.1 by default; formdata-bench's fault lab
// passes its server namespace's address) and serves until its standard input closes. With
// `--h2c` it speaks HTTP/2 over cleartext by prior knowledge (swift-nio-http2; each stream gets
// the same handlers), for resumable uploads over h2; otherwise HTTP/1.1.
// Routes: POST/PUT any path → the body is written to <directory>/upload-<n>, answered 201 with a
// JSON report (its sha256 by coreutils' sha256sum); GET /report → a JSON array of the completed uploads:
// {"path", "method", "bytes", "sha256", "file", "contentType"}. `Location` of the 104 answers is
// relative (`/resumable_upload/<id>`), so a client that reaches the server through a relay
// resumes through the same relay.
import Foundation

#if ResumableUploadServer
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOHTTPTypesHTTP2
import NIOHTTP2
import NIOPosix
import NIOResumableUpload

/// The completed uploads, shared by every connection.
final class UploadLedger: Sendable {
    private let entries = NIOLockedValueBox<[[String: String]]>([])
    private let counter = NIOLockedValueBox(0)

    func nextNumber() -> Int {
        counter.withLockedValue {
            $0 += 1
            return $0
        }
    }
    func add(_ entry: [String: String]) { entries.withLockedValue { $0.append(entry) } }
    func json() -> Data {
        let all = entries.withLockedValue { $0 }
        return (try? JSONSerialization.data(withJSONObject: all, options: [.sortedKeys])) ?? Data("[]".utf8)
    }
}

/// Receives one (possibly resumed) upload as a regular request; answers GET /report.
final class UploadRecorder: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    let directory: String
    let ledger: UploadLedger
    private var request: HTTPRequest?
    private var file: FileHandle?
    private var filePath = ""
    private var bytes = 0

    init(directory: String, ledger: UploadLedger) {
        self.directory = directory
        self.ledger = ledger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
            bytes = 0
            if head.method == .post || head.method == .put {
                filePath = "\(directory)/upload-\(ledger.nextNumber())"
                _ = FileManager.default.createFile(atPath: filePath, contents: nil)
                file = FileHandle(forWritingAtPath: filePath)
            }
        case .body(let body):
            bytes += body.readableBytes
            body.withUnsafeReadableBytes { buffer in
                file?.write(Data(buffer))
            }
        case .end:
            guard let request else { return }
            if request.method == .get, request.path == "/report" {
                respond(context: context, status: .ok, body: ledger.json())
            } else if file != nil {
                try? file?.close()
                file = nil
                let entry: [String: String] = [
                    "path": request.path ?? "", "method": request.method.rawValue, "bytes": String(bytes),
                    "sha256": sha256sum(filePath), "file": filePath, "contentType": request.headerFields[.contentType] ?? "",
                ]
                ledger.add(entry)
                let body = (try? JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys])) ?? Data()
                respond(context: context, status: .created, body: body)
            } else {
                respond(context: context, status: .notFound, body: Data())
            }
            self.request = nil
        }
    }

    private func respond(context: ChannelHandlerContext, status: HTTPResponse.Status, body: Data) {
        var response = HTTPResponse(status: status)
        response.headerFields[.contentType] = "application/json"
        response.headerFields[.contentLength] = String(body.count)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: body.count)
        buffer.writeBytes(body)
        context.write(wrapOutboundOut(.body(buffer)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// The sha256 of the file at `path`, by coreutils' `sha256sum` (an implementation we did not write,
/// and fast in a debug build). Run on the event loop when an upload completes: this test server
/// takes one upload at a time.
func sha256sum(_ path: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let output = Pipe()
    process.standardOutput = output
    do { try process.run() } catch { return "sha256sum failed: \(error)" }
    // The whole output is there once sha256sum closes it (as it exits). No waitUntilExit():
    // corelibs Foundation's spins the current run loop (here off the main thread, on an event
    // loop's thread in the server) — one suspect of an unexplained stall, removed.
    let data = output.fileHandleForReading.readDataToEndOfFile()
    return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
}

/// The resumable-upload handler and the recorder, on an HTTP/1.1 connection or an h2 stream.
func addUploadHandlers(
    _ sync: ChannelPipeline.SynchronousOperations, _ context: HTTPResumableUploadContext, _ directory: String, _ ledger: UploadLedger
) throws {
    try sync.addHandler(HTTPResumableUploadHandler(context: context, handlers: [UploadRecorder(directory: directory, ledger: ledger)]))
}

var arguments = Array(CommandLine.arguments.dropFirst())
let speaksH2C = arguments.first == "--h2c"
if speaksH2C { arguments.removeFirst() }
guard arguments.count == 1 || arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: ResumableUploadServer [--h2c] <directory> [<address>]\n".utf8))
    exit(2)
}
let directory = arguments[0]
let address = arguments.count == 2 ? arguments[1] : "127.0.0.1"
let ledger = UploadLedger()
// An empty origin: `Location: /resumable_upload/<id>`, resolved by the client against the URL it
// sent to (through a relay when there is one).
let uploadContext = HTTPResumableUploadContext(origin: "")
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let server = try ServerBootstrap(group: group)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    // Small receive buffers: what the server has not read when a connection is cut (and
    // discards) stays small, so the tests can bound what is sent to it twice.
    .childChannelOption(.socketOption(.so_rcvbuf), value: 256 << 10)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            if speaksH2C {
                _ = try sync.configureHTTP2Pipeline(
                    mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
                ) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTPServerCodec())
                        try addUploadHandlers(stream.pipeline.syncOperations, uploadContext, directory, ledger)
                    }
                }
            } else {
                try sync.configureHTTPServerPipeline()
                try sync.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                try addUploadHandlers(sync, uploadContext, directory, ledger)
            }
        }
    }
    .bind(host: address, port: 0)
    .wait()
FileHandle.standardOutput.write(Data("PORT \(server.localAddress?.port ?? 0)\n".utf8))
// Serve until standard input closes (the test stops the process that way, or with SIGTERM).
while FileHandle.standardInput.availableData.count > 0 {}
try? server.close().wait()
try? group.syncShutdownGracefully()
#else
// Built without the ResumableUploadServer trait: swift-nio-extras is not resolved.
FileHandle.standardError.write(
    Data("ResumableUploadServer: built without the ResumableUploadServer trait (swift build --traits ResumableUploadServer)\n".utf8))
exit(2)
#endif
