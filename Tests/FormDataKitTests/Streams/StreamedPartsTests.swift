@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import Testing

@testable import FormDataKit

#if AsyncHTTPClient
import FormDataKitAsyncHTTPClient
#endif

/// Parts of unknown length (issue 56), sent over curl to receivers FormDataKit did not write:
/// werkzeug and Go's net/http + mime/multipart, which hash every part they parsed.
@Suite("Streamed parts at werkzeug and Go")
struct StreamedPartsTests {
    typealias Support = TransportTestSupport

    static let pipeBytes = Support.randomData(size: 700_001, seed: 56)
    static let asyncPieces = (0..<40).map { Support.randomData(size: 3_000 + $0 * 97, seed: UInt64(100 + $0)) }
    static var asyncBytes: Data { asyncPieces.reduce(into: Data()) { $0.append($1) } }
    static let known = Support.randomData(size: 12_345, seed: 7)

    /// Slices of `data` of `size` bytes.
    static func pieces(_ data: Data, size: Int) -> [Data] {
        stride(from: 0, to: data.count, by: size).map { data.subdata(in: $0..<min(data.count, $0 + size)) }
    }

    static func sequence(_ pieces: [Data]) -> AsyncStream<Data> {
        AsyncStream { continuation in
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
        }
    }

    /// A request to `url` with the patient idle timeout of tests that are not about timeouts (the
    /// peers are Python and Go processes that a loaded machine can stall for seconds).
    static func request(_ url: URL) -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        return request
    }

    /// The mixed form: a value, a pipe written by another thread (length `pipeLength`), an
    /// `AsyncStream` (length `asyncLength`), bytes of known length.
    static func mixedRequest(to url: URL, pipe: PipeFeed, pipeLength: Int64?, asyncLength: Int64?) -> FormDataRequest {
        let request = Self.request(url)
        request.addPostValue("hello", forKey: "title")
        request.addStream(
            pipe.stream, length: pipeLength, withFileName: "pipe.bin", andContentType: "application/octet-stream", forKey: "piped")
        request.addStream(
            sequence(asyncPieces), length: asyncLength, withFileName: "gen.bin", andContentType: "application/x-gen", forKey: "generated")
        request.addData(known, withFileName: "known.bin", andContentType: "image/png", forKey: "known")
        pipe.feed(pieces(pipeBytes, size: 65_000))
        return request
    }

    static let expectedFiles = [
        ["piped", "pipe.bin", "application/octet-stream", String(pipeBytes.count), SHA256.hex(pipeBytes)],
        ["generated", "gen.bin", "application/x-gen", String(asyncBytes.count), SHA256.hex(asyncBytes)],
        ["known", "known.bin", "image/png", String(known.count), SHA256.hex(known)],
    ]

    /// python-multipart read the same parts (skipped with a note when it is not installed, unless CI).
    static func expectPythonMultipart(_ result: StreamPeerResult) {
        if let missing = result.pythonMultipartError {
            if RealServers.required { Issue.record("python-multipart is needed: \(missing)") }
            return
        }
        #expect(result.pythonMultipartFiles == expectedFiles.map { [$0[0], $0[1], $0[3], $0[4]] })
    }

    static func result(_ response: FormDataResponse) throws -> StreamPeerResult {
        #expect(response.statusCode == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try JSONDecoder().decode(StreamPeerResult.self, from: response.body)
    }

    @Test(
        "unknown lengths go chunked and every part arrives exactly at werkzeug and Go",
        .enabled(if: StreamPeer.goMissing == nil || RealServers.required, "needs Go"),
        arguments: [StreamPeer.Kind.werkzeug, .go])
    func chunkedMixed(peer kind: StreamPeer.Kind) async throws {
        try await StreamPeer.with(kind) { peer in
            let pipe = try PipeFeed()
            let request = Self.mixedRequest(to: peer.url(), pipe: pipe, pipeLength: nil, asyncLength: nil)
            request.shouldLogDebugBody = true
            try request.buildPostBody()
            #expect(request.isPostLengthKnown == false)
            #expect(request.requestHeaders["Transfer-Encoding"] == "chunked")
            #expect(request.requestHeaders["Content-Length"] == nil)
            #expect(request.debugBodyString?.contains("[stream of unknown length]") == true)
            let result = try Self.result(try await request.start())
            #expect(result.te == ["chunked"])
            #expect(result.cl == nil)
            #expect(result.files == Self.expectedFiles)
            #expect(result.fields.count == 1)
            if kind == .werkzeug { Self.expectPythonMultipart(result) }
        }
    }

    @Test(
        "declared lengths go with the exact Content-Length, never chunked",
        .enabled(if: StreamPeer.goMissing == nil || RealServers.required, "needs Go"),
        arguments: [StreamPeer.Kind.werkzeug, .go])
    func declaredLengths(peer kind: StreamPeer.Kind) async throws {
        try await StreamPeer.with(kind) { peer in
            let pipe = try PipeFeed()
            let request = Self.mixedRequest(
                to: peer.url(), pipe: pipe, pipeLength: Int64(Self.pipeBytes.count), asyncLength: Int64(Self.asyncBytes.count))
            try request.buildPostBody()
            #expect(request.isPostLengthKnown)
            #expect(request.requestHeaders["Content-Length"] == String(request.postLength))
            let result = try Self.result(try await request.start())
            #expect(result.te == nil)
            #expect(result.cl == Int(request.postLength))
            #expect(result.files == Self.expectedFiles)
        }
    }

    @Test(
        "a raw body from a pipe, of unknown length, goes chunked (and a 411 says so); gzip over a streamed part is compressed while sent, chunked, exact"
    )
    func rawBodyAndGzip() async throws {
        try await StreamPeer.with(.werkzeug) { peer in
            let pipe = try PipeFeed()
            let raw = Self.request(peer.url("/411"))
            raw.addRequestHeader("Content-Type", value: "application/octet-stream")
            raw.appendPostData(from: pipe.stream, length: nil)
            pipe.feed(Self.pieces(Self.known, size: 1000))
            do throws(FormDataError) {
                _ = try await raw.start()
                Issue.record("a 411 was not an error")
            } catch {
                #expect(error == .lengthRequired(url: peer.url("/411").absoluteString))
                #expect(error.description.contains("declare the stream's length"))
            }

            let zipped = Self.request(peer.url())
            zipped.shouldCompressRequestBody = true
            zipped.addStream(Self.sequence(Self.asyncPieces), withFileName: "gen.bin", andContentType: "text/plain", forKey: "generated")
            try zipped.buildPostBody()
            #expect(zipped.requestHeaders["Transfer-Encoding"] == "chunked")
            #expect(zipped.requestHeaders["Content-Encoding"] == "gzip")
            let result = try Self.result(try await zipped.start())
            #expect(result.te == ["chunked"])
            #expect(result.ce == "gzip")
            #expect(result.files == [["generated", "gen.bin", "text/plain", String(Self.asyncBytes.count), SHA256.hex(Self.asyncBytes)]])
        }
    }

    @Test("a stream shorter or longer than declared fails the send naming the field and both lengths")
    func lengthMismatch() async throws {
        try await StreamPeer.with(.werkzeug) { peer in
            for (declared, expected) in [(Int64(Self.known.count + 1), UInt64(Self.known.count)), (Int64(100), UInt64(101))] {
                let request = Self.request(peer.url())
                request.addStream(
                    Self.sequence([Self.known]), length: declared, withFileName: "a.bin", andContentType: nil, forKey: "short")
                do throws(FormDataError) {
                    _ = try await request.start()
                    Issue.record("a stream of the wrong length was sent")
                } catch {
                    #expect(
                        error
                            == .internalErrorWhileBuilding(
                                underlying: .streamLengthMismatch(
                                    field: "short", declaredLength: UInt64(declared), streamedLength: expected)))
                }
            }
        }
    }

    struct Broken: Error {}

    @Test("a sequence that throws mid-way fails the send with the field and the error")
    func throwingStream() async throws {
        try await StreamPeer.with(.werkzeug) { peer in
            let failing = AsyncThrowingStream<Data, any Error> { continuation in
                continuation.yield(Self.known)
                continuation.finish(throwing: Broken())
            }
            let request = Self.request(peer.url())
            request.addStream(failing, withFileName: "a.bin", andContentType: nil, forKey: "broken")
            do throws(FormDataError) {
                _ = try await request.start()
                Issue.record("a failing stream was sent")
            } catch {
                guard case .internalErrorWhileBuilding(.streamFailed(let field, _)) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(field == "broken")
            }
        }
    }

    @Test("a cancel while the stream blocks ends the send at once")
    func cancelWhileBlocked() async throws {
        try await StreamPeer.with(.werkzeug) { peer in
            let pipe = try PipeFeed()
            let request = Self.request(peer.url())
            request.addStream(pipe.stream, withFileName: "p.bin", andContentType: nil, forKey: "piped")
            let (sent, sentContinuation) = AsyncStream<Void>.makeStream()
            request.bytesSentBlock = { _, _ in sentContinuation.yield() }
            // The first piece goes; then the pipe stays open and empty.
            pipe.feed([Self.known], closing: false)
            let send = Task { try await request.start() }
            for await _ in sent { break }
            request.cancel()
            let outcome = await send.result
            pipe.closeWriteEnd()
            #expect(throws: FormDataError.cancelled) { try outcome.get() }
        }
    }

    @Test("a stream that has nothing yet holds only its own send: another send on the transport finishes meanwhile")
    func slowStreamHoldsOnlyItsSend() async throws {
        try await StreamPeer.with(.werkzeug) { peer in
            let pipe = try PipeFeed()
            let slow = Self.request(peer.url())
            slow.addStream(pipe.stream, withFileName: "p.bin", andContentType: nil, forKey: "piped")
            let (sent, sentContinuation) = AsyncStream<Void>.makeStream()
            slow.bytesSentBlock = { _, _ in sentContinuation.yield() }
            pipe.feed([Self.known], closing: false)
            let slowSend = Task { try await slow.start() }
            for await _ in sent { break }
            // The pipe is empty and open: the slow send waits for it, the other goes through.
            let other = Self.request(peer.url())
            other.addData(Self.known, withFileName: "k.bin", andContentType: "image/png", forKey: "known")
            #expect(try Self.result(try await other.start()).files.count == 1)
            pipe.feed([Self.known])
            let twice = Self.known + Self.known
            let result = try Self.result(try await slowSend.value)
            #expect(result.files == [["piped", "p.bin", "application/octet-stream", String(twice.count), SHA256.hex(twice)]])
        }
    }

    @Test("a 307 re-sends a body from a factory, never a one-shot stream that went")
    func redirectResend() async throws {
        try await StreamPeer.with(.werkzeug) { peer in
            let oneShot = Self.request(peer.url("/redirect307"))
            oneShot.addStream(Self.sequence([Self.known]), withFileName: "a.bin", andContentType: nil, forKey: "once")
            do throws(FormDataError) {
                _ = try await oneShot.start()
                Issue.record("a one-shot stream was sent twice")
            } catch {
                guard case .streamNotReplayable(let field, _) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(field == "once")
            }

            let made = Locked<Int>(0)
            let factory = Self.request(peer.url("/redirect307"))
            factory.addStream(length: nil, withFileName: "a.bin", andContentType: nil, forKey: "made") {
                made.withLock { $0 += 1 }
                return InputStream(data: Self.known)
            }
            let result = try Self.result(try await factory.start())
            #expect(result.files == [["made", "a.bin", "application/octet-stream", String(Self.known.count), SHA256.hex(Self.known)]])
            #expect(made.withLock { $0 } == 2)
        }
    }

    #if AsyncHTTPClient
    @Test("over AsyncHTTPClient too: unknown lengths chunked, declared ones exact, every part exact at werkzeug")
    func asyncHTTPClient() async throws {
        let transport = AsyncHTTPClientTransport()
        do {
            try await StreamPeer.with(.werkzeug) { peer in
                for declared in [false, true] {
                    let pipe = try PipeFeed()
                    let request = Self.mixedRequest(
                        to: peer.url(), pipe: pipe, pipeLength: declared ? Int64(Self.pipeBytes.count) : nil,
                        asyncLength: declared ? Int64(Self.asyncBytes.count) : nil)
                    request.transport = transport
                    let result = try Self.result(try await request.start())
                    #expect(result.te == (declared ? nil : ["chunked"]))
                    #expect(result.files == Self.expectedFiles)
                }
            }
        } catch {
            try await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
    }
    #endif

    @Test("URLSessionTransport refuses a body with streams before anything is sent")
    func urlSessionRefuses() async throws {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/never")!)
        request.transport = URLSessionTransport()
        request.addStream(Self.sequence([Self.known]), withFileName: "a.bin", andContentType: nil, forKey: "s")
        do throws(FormDataError) {
            _ = try await request.start()
            Issue.record("sent")
        } catch {
            guard case .transportCannotStream = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }
}
