import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// Everything that reaches the wire is checked once, by the send driver, whatever route it takes
/// (issue 25's probe: a cookie, the method, a credential and a caller's Transfer-Encoding went
/// out unchecked through libcurl's options).
@Suite("The send driver refuses what would inject into the request, on every transport")
struct WireValidationTests {
    static let transports: [(String, any FormDataTransport)] = [("curl", CurlTransport.shared), ("urlSession", URLSessionTransport.shared)]

    /// Sends `request` to `receiver`; returns the error and whether anything arrived.
    static func refused(_ configure: (FormDataRequest) -> Void, transport: any FormDataTransport) async throws -> (FormDataError?, Int) {
        let receiver = try await FormReceiver.start()
        let request = FormDataRequest(url: receiver.url("/upload"))
        request.transport = transport
        request.timeOutSeconds = 30
        request.setPostValue("x", forKey: "field")
        configure(request)
        let error = request.startSynchronous()
        let arrived = receiver.requests.count
        await receiver.stop()
        return (error, arrived)
    }

    @Test("a cookie whose value carries CR LF and a header (the probe's X-Injected) is refused; nothing is sent")
    func cookieInjectionRefused() async throws {
        for (name, transport) in Self.transports {
            let (error, arrived) = try await Self.refused(
                { $0.addRequestCookie(name: "a", value: "b\r\nX-Injected: yes") }, transport: transport)
            #expect(error == .invalidRequestCookie(name: "a", value: "b\r\nX-Injected: yes"), "\(name)")
            #expect(arrived == 0, "\(name)")
            let (semicolon, _) = try await Self.refused({ $0.addRequestCookie(name: "a", value: "b; admin=1") }, transport: transport)
            #expect(semicolon == .invalidRequestCookie(name: "a", value: "b; admin=1"), "\(name)")
        }
    }

    @Test("a method that is not a token (a request line rewritten, a space) is refused; nothing is sent")
    func methodInjectionRefused() async throws {
        for (name, transport) in Self.transports {
            let evil = "PUT /injected HTTP/1.1\r\nX-Injected: yes\r\nX-Pad:"
            let (error, arrived) = try await Self.refused({ $0.requestMethod = evil }, transport: transport)
            #expect(error == .invalidRequestMethod(method: evil), "\(name)")
            #expect(arrived == 0, "\(name)")
            let (space, _) = try await Self.refused({ $0.requestMethod = "GE T" }, transport: transport)
            #expect(space == .invalidRequestMethod(method: "GE T"), "\(name)")
            #expect(space?.asiErrorCode == 5)
        }
    }

    @Test("CR or LF in a username (Digest's username=\"…\") or an NTLM domain is refused, the value not repeated")
    func credentialInjectionRefused() async throws {
        let (error, arrived) = try await Self.refused(
            {
                $0.username = "alice\r\nX-Injected: yes"
                $0.password = "secret"
            }, transport: CurlTransport.shared)
        #expect(error == .invalidCredential(field: "username"))
        #expect(arrived == 0)
        let (domain, _) = try await Self.refused(
            {
                $0.username = "alice"
                $0.password = "secret"
                $0.domain = "CORP\nX"
            }, transport: CurlTransport.shared)
        #expect(domain == .invalidCredential(field: "domain"))
        #expect(!(domain?.localizedDescription.contains("CORP") ?? true))
    }

    @Test("a caller's Transfer-Encoding is refused (the body goes with its exact Content-Length, never chunked)")
    func transferEncodingRefused() async throws {
        for (name, transport) in Self.transports {
            let (error, arrived) = try await Self.refused(
                { $0.addRequestHeader("Transfer-Encoding", value: "chunked") }, transport: transport)
            #expect(error == .invalidRequestHeader(name: "Transfer-Encoding", value: "chunked"), "\(name)")
            #expect(arrived == 0, "\(name)")
        }
    }

    @Test("ordinary methods, cookies (quoted too) and credentials still go out")
    func ordinaryValuesPass() async throws {
        let (error, arrived) = try await Self.refused(
            {
                $0.requestMethod = "PATCH"
                $0.addRequestCookie(name: "session", value: "\"abc-123_x.y\"")
                $0.username = "alice"
                $0.password = "s e c r e t;"
            }, transport: CurlTransport.shared)
        #expect(error == nil)
        #expect(arrived == 1)
    }
}
