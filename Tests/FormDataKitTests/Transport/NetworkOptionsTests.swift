@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting
import Testing
// @testable: the shutdown test waits on the curl loop's own state (its thread ended).
@testable import FormDataKit

/// ASIHTTPRequest's network properties over the curl transport, against the embedded receiver
/// and the openssl-made HTTPS server: cookies, public-key pins, certificate checks, and the typed
/// error a transport gives for a setting it cannot apply. (Challenge authentication, proxies and
/// client certificates against Apache httpd and tinyproxy: RealServerNetworkTests.)
@Suite("Network options: cookies, public-key pins, certificate checks")
struct NetworkOptionsTests {
    /// A request to `url` through `transport` with one field.
    static func request(_ url: URL, transport: any FormDataTransport) -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.transport = transport
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        request.setPostValue("1", forKey: "a")
        return request
    }

    @Test("a cookie one response sets goes with the next request on the same transport, and nowhere else")
    func cookieJar() async throws {
        let receiver = try await FormReceiver.start()
        let other = try await FormReceiver.start(host: "127.0.0.2")
        defer {
            Task {
                await receiver.stop()
                await other.stop()
            }
        }
        let transport = CurlTransport()

        let setting = Self.request(receiver.url("/cookie?set=session=abc123"), transport: transport)
        _ = try await setting.start()
        #expect(setting.responseCookies.map(\.name) == ["session"])
        #expect(setting.responseCookies.first?.value == "abc123")

        let next = Self.request(receiver.url("/upload"), transport: transport)
        _ = try await next.start()
        #expect(receiver.lastRequest?.header("Cookie") == "session=abc123")

        // Another host (127.0.0.2) never gets it.
        let elsewhere = Self.request(other.url("/upload"), transport: transport)
        _ = try await elsewhere.start()
        #expect(other.lastRequest?.header("Cookie") == nil)

        // Without persistence, the jar is neither read nor written; request cookies still go.
        let bare = Self.request(receiver.url("/upload"), transport: transport)
        bare.useCookiePersistence = false
        bare.addRequestCookie(name: "explicit", value: "1")
        _ = try await bare.start()
        #expect(receiver.lastRequest?.header("Cookie") == "explicit=1")

        // Another transport instance has its own (empty) jar.
        let fresh = Self.request(receiver.url("/upload"), transport: CurlTransport())
        _ = try await fresh.start()
        #expect(receiver.lastRequest?.header("Cookie") == nil)
    }

    @Test("the cookie jar file is written after a send and read by a new transport")
    func cookieJarFile() async throws {
        let receiver = try await FormReceiver.start()
        let file = NSTemporaryDirectory() + "fdk-cookies-\(UUID().uuidString).txt"
        let writer = CurlTransport(configuration: .init(cookieJarFile: file))
        let reader = CurlTransport(configuration: .init(cookieJarFile: file))
        let first = Self.request(receiver.url("/cookie?set=kept=yes"), transport: writer)
        _ = try await first.start()
        let saved = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        let second = Self.request(receiver.url("/upload"), transport: reader)
        _ = try await second.start()
        let cookie = receiver.lastRequest?.header("Cookie")
        // Both transports release their handles (each writes the jar file then) before the file
        // is removed, so none is left behind.
        await writer.shutdown()
        await reader.shutdown()
        await receiver.stop()
        try? FileManager.default.removeItem(atPath: file)
        #expect(saved.contains("kept\tyes"), "\(saved)")
        #expect(cookie == "kept=yes")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test("the cookie jar file is libcurl's format both ways: `curl -c` writes one the transport reads, `curl -b` reads the transport's")
    func cookieJarFileWithCurl() async throws {
        guard let curl = ["/usr/bin/curl", "/bin/curl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            print("note: curl is not installed; the cookie-file interop test is skipped (.ci/run installs it)")
            return
        }
        try await TransportTestSupport.withReceiver { receiver in
            let fromCurl = NSTemporaryDirectory() + "fdk-cookies-curl-\(UUID().uuidString).txt"
            let fromUs = NSTemporaryDirectory() + "fdk-cookies-ours-\(UUID().uuidString).txt"
            defer { for file in [fromCurl, fromUs] { try? FileManager.default.removeItem(atPath: file) } }
            // curl writes a jar, and an HTTP-only cookie's line (`#HttpOnly_`) is added; the transport reads both.
            let wrote = try await ChildProcess.run(
                curl, ["-s", "-o", "/dev/null", "-c", fromCurl, receiver.url("/cookie?set=bycurl=1").absoluteString])
            #expect(wrote.status == 0)
            let written = try String(contentsOfFile: fromCurl, encoding: .utf8)
            #expect(written.contains("\tbycurl\t1"), "\(written)")
            try (written + "#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\thonly\t3\n").write(toFile: fromCurl, atomically: true, encoding: .utf8)
            let reader = CurlTransport(configuration: .init(cookieJarFile: fromCurl))
            _ = try await Self.request(receiver.url("/upload"), transport: reader).start()
            let sent = Set((receiver.lastRequest?.header("Cookie") ?? "").components(separatedBy: "; "))
            #expect(sent == ["bycurl=1", "honly=3"])
            // The transport writes a jar; curl reads it and sends its cookie.
            let writer = CurlTransport(configuration: .init(cookieJarFile: fromUs))
            _ = try await Self.request(receiver.url("/cookie?set=byus=2"), transport: writer).start()
            let read = try await ChildProcess.run(curl, ["-s", "-o", "/dev/null", "-b", fromUs, receiver.url("/upload").absoluteString])
            #expect(read.status == 0)
            #expect(receiver.lastRequest?.header("Cookie") == "byus=2")
            await reader.shutdown()
            await writer.shutdown()
        }
    }

    /// Records an issue unless `outcome` is the send's failure for a file at `path` that is not a
    /// regular file but a `kind` (``FormDataError/notARegularFile(path:kind:)``, read before the send).
    static func expectNotARegularFile(_ outcome: Result<Int, FormDataError>?, path: String, kind: String) {
        let expected = FormDataError.internalErrorWhileBuilding(underlying: .notARegularFile(path: path, kind: kind))
        guard case .failure(let error)? = outcome else {
            Issue.record("\(kind): expected \(expected), got \(String(describing: outcome))")
            return
        }
        #expect(error == expected, "\(kind)")
    }

    /// Runs `body` with a transport whose jar file was written by a first send and then replaced
    /// by a FIFO nobody reads (writing it now waits until a reader comes: a file that is not a
    /// regular one is written directly), and a send started that sets a cookie. The file is
    /// removed after.
    static func withJarFileTurnedFIFO(
        _ body: (FormReceiver, String, CurlTransport, ThreadedSend) async throws -> Void
    ) async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let file = NSTemporaryDirectory() + "fdk-cookies-\(UUID().uuidString).txt"
            defer { try? FileManager.default.removeItem(atPath: file) }
            let transport = CurlTransport(configuration: .init(cookieJarFile: file))
            // The first send reads the (missing) file into the jar, and writes it.
            _ = try await Self.request(receiver.url("/cookie?set=first=1"), transport: transport).start()
            #expect(((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").contains("first\t1"))
            try SpecialFiles.replaceWithFIFO(file)
            let setting = ThreadedSend(Self.request(receiver.url("/cookie?set=second=2"), transport: transport))
            try await body(receiver, file, transport, setting)
        }
    }

    @Test(
        "a cookie jar file whose write hangs (a FIFO put in its place) holds no other send; the send that set a cookie completes once the jar is written"
    )
    func cookieJarFileWriteHangs() async throws {
        try await Self.withJarFileTurnedFIFO { receiver, file, transport, setting in
            let other = try TransportTestSupport.makeFile(size: 2_000, seed: 98)
            defer { other.remove() }
            // The jar's write is under way (its thread blocked opening the FIFO): the event a 0.5 s
            // wait used to hope for. The other sends finish meanwhile, and the send that set the
            // cookie has not completed.
            #expect(await TransportTestSupport.blocking { SpecialFiles.waitForThreadBlockedOpening(fifo: file) })
            await ReadAheadTests.sendOthers(5, file: other.path, to: receiver, on: transport)
            #expect(setting.finishedAt == nil, "completed before its cookies were written")
            let written = await TransportTestSupport.blocking { SpecialFiles.drainWriter(ofFIFO: file) }
            #expect(String(decoding: written ?? Data(), as: UTF8.self).contains("second\t2"))
            #expect((try? await setting.outcome(within: ReadAheadTests.eventBound)?.get()) == 200)
        }
    }

    @Test("the public-key pin computed from the server's certificate passes; another fails naming the pin")
    func publicKeyPinning() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { server.stop() }
        let anchor = try Data(contentsOf: URL(fileURLWithPath: certificates.selfSignedA.certificate))
        let otherCertificate = try Data(contentsOf: URL(fileURLWithPath: certificates.selfSignedB.certificate))
        let own = NetworkPinning.publicKeyHash(ofCertificate: anchor) ?? "none"
        let other = NetworkPinning.publicKeyHash(ofCertificate: otherCertificate) ?? "none"
        #expect(own.hasPrefix("sha256//") && own.count == 52 && own != other)
        // The same hash openssl computes from the certificate's public key.
        let openssl = try await SpawnedProcess.run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64", "sh",
                certificates.selfSignedA.certificate,
            ])
        #expect("sha256//" + String(decoding: openssl.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == own)

        let right = Self.request(server.url("/upload"), transport: CurlTransport())
        right.trustedCertificates = [anchor]
        right.pinnedPublicKeyHashes = [other, own]
        #expect(try await right.start().statusCode == 200)

        let wrong = Self.request(server.url("/upload"), transport: CurlTransport())
        wrong.trustedCertificates = [anchor]
        wrong.pinnedPublicKeyHashes = [other]
        let outcome = await TransportTestSupport.outcome(of: wrong)
        guard case .failure(.connectionFailure(let underlying)) = outcome else {
            Issue.record("expected a connection failure naming the pin, got \(outcome)")
            return
        }
        #expect(underlying.code == 90, "\(underlying)")
        #expect(underlying.message.lowercased().contains("pinned public key"), "\(underlying)")
    }

    @Test("a cookie jar file that is a FIFO, a device, a socket or a /proc file fails the send at once, naming it; never read for ever")
    func cookieJarFileNotARegularFile() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let special = try SpecialFiles()
            for (path, kind) in special.all {
                let transport = CurlTransport(configuration: .init(cookieJarFile: path))
                // "At once": the send fails without reading the file; what the bound catches is a
                // send that reads it for ever (a minute, not 5 s, for a machine whose cores are busy).
                let outcome = await ThreadedSend(Self.request(receiver.url("/upload"), transport: transport))
                    .outcome(within: ReadAheadTests.eventBound)
                if outcome == nil { SpecialFiles.releaseReaders(ofFIFO: path) }
                Self.expectNotARegularFile(outcome, path: path, kind: kind)
            }
        }
    }

    @Test("shutdown() waits for a cookie jar write still running on the reader pool; its send fails as cancelled")
    func shutdownWaitsForJarWrite() async throws {
        try await Self.withJarFileTurnedFIFO { _, file, transport, setting in
            // The jar's write is under way (its thread blocked opening the FIFO) before the shutdown
            // comes: a 0.5 s wait used to hope so, and on a busy machine the shutdown could come
            // first (the send then cancelled in flight, no write to wait for).
            #expect(await TransportTestSupport.blocking { SpecialFiles.waitForThreadBlockedOpening(fifo: file) })
            #expect(setting.finishedAt == nil, "completed before its cookies were written")
            let stopped = Locked(false)
            let shutdown = Task {
                await transport.shutdown()
                stopped.withLock { $0 = true }
            }
            // The shutdown has got as far as it can without the write: the loop's thread ended.
            let loop = transport.eventLoop
            let loopStopped = await TransportTestSupport.blocking { () -> Bool in
                let deadline = Date().addingTimeInterval(ReadAheadTests.eventBound)
                while !loop.lock.withLock({ loop.stopped }), Date() < deadline { usleep(1_000) }
                return loop.lock.withLock { loop.stopped }
            }
            #expect(loopStopped)
            // A shutdown that did not wait for the write would return now; give it 300 ms to show.
            // (This window cannot fail on a slow machine; it can only miss a wrong return there.)
            try await Task.sleep(for: .milliseconds(300))
            #expect(!stopped.current, "shutdown returned while the jar was still being written")
            #expect(setting.finishedAt == nil, "completed before its cookies were written")
            _ = await TransportTestSupport.blocking { SpecialFiles.drainWriter(ofFIFO: file) }
            await shutdown.value
            let outcome = await setting.outcome(within: ReadAheadTests.eventBound)
            guard case .failure(.cancelled)? = outcome else {
                Issue.record("expected the send to fail as cancelled, got \(String(describing: outcome))")
                return
            }
        }
    }

    @Test(
        "a client certificate path that is a FIFO, a device, a socket or a /proc file fails the send at once, naming it; other sends on the transport are not held"
    )
    func clientCertificateNotARegularFile() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { server.stop() }
        let anchor = try Data(contentsOf: URL(fileURLWithPath: certificates.selfSignedA.certificate))
        let special = try SpecialFiles()
        let transport = CurlTransport()
        for (path, kind) in special.all {
            // libcurl read the files itself at the handshake, on the transport's thread: a FIFO
            // there waited for a writer, holding every send on the transport.
            let request = Self.request(server.url("/upload"), transport: transport)
            request.trustedCertificates = [anchor]
            request.clientCertificate = .init(path: path)
            // As above: the bound catches a send that waits on the file for ever.
            let outcome = await ThreadedSend(request).outcome(within: ReadAheadTests.eventBound)
            if outcome == nil { SpecialFiles.releaseReaders(ofFIFO: path) }
            Self.expectNotARegularFile(outcome, path: path, kind: kind)
        }
        let other = Self.request(server.url("/upload"), transport: transport)
        other.trustedCertificates = [anchor]
        #expect((try? await ThreadedSend(other).outcome(within: ReadAheadTests.eventBound)?.get()) == 200)
    }

    @Test("validatesSecureCertificate = false accepts a self-signed certificate; true (the default) refuses it")
    func certificateValidation() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await HTTPSTestServer(certificateChain: certificates.selfSignedA.certificate, key: certificates.selfSignedA.key)
        defer { server.stop() }
        let checked = Self.request(server.url("/upload"), transport: CurlTransport())
        await #expect(throws: FormDataError.self) { try await checked.start() }
        let unchecked = Self.request(server.url("/upload"), transport: CurlTransport())
        unchecked.validatesSecureCertificate = false
        #expect(try await unchecked.start().statusCode == 200)
    }

    @Test("a setting the transport cannot apply is a typed error naming it, not a different request")
    func unsupportedSettingIsAnError() async throws {
        let receiver = try await FormReceiver.start()
        defer { Task { await receiver.stop() } }
        let request = Self.request(receiver.url("/upload"), transport: URLSessionTransport())
        request.proxyHost = "127.0.0.1"
        request.proxyPort = 9
        let outcome = await TransportTestSupport.outcome(of: request)
        guard case .failure(.unableToCreateRequest(let underlying)) = outcome else {
            Issue.record("expected unableToCreateRequest naming proxyHost, got \(outcome)")
            return
        }
        #expect(underlying.message.contains("proxyHost"), "\(underlying)")
        #expect(receiver.requests.isEmpty)
    }

    @Test("the public-key hash of something that is not a certificate is nil")
    func pinOfJunk() {
        #expect(NetworkPinning.publicKeyHash(ofCertificate: Data("junk".utf8)) == nil)
        #expect(NetworkPinning.publicKeyHash(ofCertificate: Data([0x30, 0x82, 0xFF])) == nil)
    }
}
