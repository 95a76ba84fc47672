import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

/// Ported code checks `error.domain` and `error.code`: FormDataError bridges to `NSError` in
/// ASIHTTPRequest's domain with its codes and descriptions.
@Suite("FormDataError as NSError: ASIHTTPRequestErrorDomain, ASI's codes and descriptions")
struct ErrorBridgingTests {
    @Test("each sending error has ASI's domain, code and description, the transport's error beneath")
    func sendingErrors() {
        let underlying = UnderlyingError(domain: "libcurl", code: 28, message: "Operation timed out after 1000 ms")
        let cases: [(FormDataError, Int, String)] = [
            (.connectionFailure(underlying: underlying), 1, "A connection failure occurred"),
            (.timedOut(underlying: underlying), 2, "The request timed out"),
            (.authenticationNeeded(underlying: underlying), 3, "Authentication needed"),
            (.cancelled, 4, "The request was cancelled"),
            (.unableToCreateRequest(underlying: underlying), 5, "Unable to create request (bad url?)"),
            (.tooMuchRedirection(underlying: underlying), 9, "The request failed because it redirected too many times"),
        ]
        for (error, code, text) in cases {
            let ns = error as NSError
            #expect(ns.domain == "ASIHTTPRequestErrorDomain")
            #expect(ns.code == code)
            #expect(ns.localizedDescription == text)
            #expect(ns.localizedFailureReason == error.description)
            if error != .cancelled {
                let beneath = ns.userInfo[NSUnderlyingErrorKey] as? NSError
                #expect(beneath?.domain == "libcurl")
                #expect(beneath?.code == 28)
            }
        }
    }

    @Test("a build error keeps its own description; wrapped, the build error is beneath")
    func buildErrors() {
        let missing = FormDataError.fileNotFound(path: "/nope")
        #expect((missing as NSError).code == 6)
        #expect((missing as NSError).localizedDescription == "No file exists at /nope")
        let wrapped = FormDataError.internalErrorWhileBuilding(underlying: missing) as NSError
        #expect(wrapped.code == 6)
        let beneath = wrapped.userInfo[NSUnderlyingErrorKey] as? NSError
        #expect(beneath?.localizedDescription == "No file exists at /nope")
        #expect(UnderlyingError(missing).message == missing.description)
    }

    @Test("a real timeout bridges with ASI's code 2")
    func realTimeout() async throws {
        let receiver = try await FormReceiver.start()
        // Answered 10 s after the 0.5 s timeout would fire (it was 3 s): a timer a busy machine
        // runs late must still come before the answer. Nothing waits for the answer.
        let request = FormDataRequest(url: receiver.url("/delay/10000"))
        request.transport = CurlTransport()
        request.timeOutSeconds = 0.5
        request.setPostValue("1", forKey: "a")
        _ = try? await request.start()
        await receiver.stop()
        let ns = try #require(request.error) as NSError
        #expect(ns.domain == FormDataError.asiErrorDomain)
        #expect(ns.code == 2)
        #expect(ns.localizedDescription == "The request timed out")
    }
}
