@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// The one origin rule (``OriginRule``) and the two paths of the driver that apply it: redirects
/// (``RedirectPolicy``) and resumable uploads (``ResumableUploadStateMachine``, `104` and `201`).
/// No sockets; the wire versions are in `ReliabilityTests` ("Origin rule on the wire").
@Suite("OriginRule")
struct OriginRuleTests {
    typealias Pair = ResumableUploadStateMachineTests.Pair
    static let origin = URL(string: "http://example.test/upload")!

    /// A request to `url` carrying every kind of credential: Basic credentials, a request
    /// cookie, the credential fields and a caller field marked sensitive (in another case).
    static func loaded(_ url: URL = origin) -> TransportRequest {
        var request = TransportRequest(
            url: url, method: "POST",
            headers: [
                (name: "Authorization", value: "Bearer t0ken"), (name: "Cookie", value: "session=s3"),
                (name: "Proxy-Authorization", value: "Basic cHJveHk="), (name: "X-Secret", value: "k3y"),
                (name: "X-Trace", value: "t1"),
            ],
            body: .data(Data("0123456789".utf8)), timeoutInterval: 0)
        request.network.credentials = .init(user: "u", password: "p")
        request.network.requestCookies = [RequestCookie(name: "jar", value: "j")]
        request.network.sensitiveHeaderNames = ["x-SECRET"]
        return request
    }

    static func names(_ request: TransportRequest) -> [String] { request.headers.map(\.name) }

    @Test("same origin, another origin and refused, with default ports filled in")
    func judges() {
        let http = URL(string: "http://a.example/x")!
        let https = URL(string: "https://a.example/x")!
        #expect(OriginRule.judge(URL(string: "http://A.example:80/y")!, from: http) == .sameOrigin)
        #expect(OriginRule.judge(URL(string: "https://a.example:443/y")!, from: https) == .sameOrigin)
        #expect(OriginRule.judge(URL(string: "http://a.example:8080/x")!, from: http) == .otherOrigin)
        #expect(OriginRule.judge(URL(string: "http://b.example/x")!, from: http) == .otherOrigin)
        // http -> https is another origin that may be visited; https -> http never.
        #expect(OriginRule.judge(https, from: http) == .otherOrigin)
        guard case .refused(let reason) = OriginRule.judge(http, from: https) else {
            Issue.record("https -> http not refused")
            return
        }
        #expect(reason.contains("https to http"))
        if case .refused = OriginRule.judge(URL(string: "ftp://a.example/x")!, from: http) {} else { Issue.record("ftp followed") }
        if case .refused = OriginRule.judge(URL(string: "file:///etc/passwd")!, from: http) {} else { Issue.record("file followed") }
    }

    @Test("carried to the same origin a request keeps everything; to another, no credential of any kind")
    func carries() {
        let request = Self.loaded()
        let same = OriginRule.carry(request, to: URL(string: "http://example.test:80/next")!)
        #expect(Self.names(same) == Self.names(request) && same.network == request.network)
        let other = OriginRule.carry(request, to: URL(string: "http://127.0.0.2:8080/steal")!)
        #expect(other.url.absoluteString == "http://127.0.0.2:8080/steal")
        #expect(Self.names(other) == ["X-Trace"])
        #expect(other.network.credentials == nil && other.network.requestCookies.isEmpty)
        #expect(other.body == request.body)
    }

    @Test("a redirect to another origin drops the caller's sensitive field with the credential fields")
    func redirectDropsSensitive() {
        let decision = RedirectPolicy().decide(
            after: Self.loaded(), statusCode: 307, location: URL(string: "http://other.test/x")!, redirectsSoFar: 0)
        guard case .follow(let next) = decision else {
            Issue.record("not followed: \(decision)")
            return
        }
        #expect(Self.names(next) == ["X-Trace"] && next.network.credentials == nil && next.method == "POST")
    }

    /// A pair whose request carries every credential and whose first exchange got a `104` naming `location`.
    static func announced(location: String, origin: URL = origin) -> Pair {
        var pair = Pair()
        pair.send = SendStateMachine(request: loaded(origin), configuration: .init())
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.informationalResponse(id: 1, head: ResumableUploadStateMachineTests.head(104, ["Location": location]), now: 1))
        pair.feed(.bodySent(id: 1, totalBytesSent: 4, now: 2))
        return pair
    }

    @Test(
        "a 104 naming another origin is disregarded: a loss fails the send, nothing goes there",
        arguments: [
            ("http://127.0.0.2:8080/steal", "http://example.test/upload"),
            ("//other.test/resumable_upload/1", "http://example.test/upload"),
            ("http://example.test:8080/resumable_upload/1", "http://example.test/upload"),
            ("http://secure.test/resumable_upload/1", "https://secure.test/upload"),
        ])
    func foreign104(location: String, origin: String) {
        var pair = Self.announced(location: location, origin: URL(string: origin)!)
        #expect(pair.resume.resumptionURL == nil)
        pair.feed(.exchangeEnded(id: 1, error: ResumableUploadStateMachineTests.lost, now: 3))
        #expect(pair.started.count == 1 && pair.started.allSatisfy { $0.request.url.absoluteString == origin })
        guard case .failure(.connectionFailure)? = pair.outcome else {
            Issue.record("not the loss: \(String(describing: pair.outcome))")
            return
        }
    }

    @Test("a 104 on the same origin resumes there with the request's credentials")
    func sameOrigin104() {
        var pair = Self.announced(location: "http://EXAMPLE.test:80/resumable_upload/7")
        pair.feed(.exchangeEnded(id: 1, error: ResumableUploadStateMachineTests.lost, now: 3))
        #expect(pair.last.request.method == "HEAD" && pair.last.request.url.host == "EXAMPLE.test")
        #expect(pair.last.request.header("Authorization") == "Bearer t0ken" && pair.last.request.network.credentials != nil)
    }

    @Test("a 201 naming another origin: the upload is not created there; the body goes to the origin as an ordinary send")
    func foreign201() {
        var pair = Pair(createsUploadFirst: true)
        pair.send = SendStateMachine(request: Self.loaded(), configuration: .init())
        pair.carryOut(pair.send.handle(.start(now: 0)))
        pair.feed(.responseHead(id: -1, head: ResumableUploadStateMachineTests.head(200, ["Upload-Limit": "min-size=0"]), now: 1))
        pair.feed(.exchangeEnded(id: -1, error: nil, now: 2))
        #expect(pair.last.id == -2 && pair.last.request.header("Upload-Complete") == "?0")
        pair.feed(.responseHead(id: -2, head: ResumableUploadStateMachineTests.head(201, ["Location": "http://127.0.0.2:9/steal"]), now: 3))
        pair.feed(.exchangeEnded(id: -2, error: nil, now: 4))
        #expect(pair.resume.resumptionURL == nil)
        let ordinary = pair.last
        #expect(ordinary.id == 1 && ordinary.request.url == Self.origin && ordinary.request.method == "POST")
        #expect(ordinary.request.header("Upload-Complete") == nil && ordinary.request.body == Self.loaded().body)
        #expect(pair.started.allSatisfy { $0.request.url.host == "example.test" })
        pair.feed(.responseHead(id: 1, head: ResumableUploadStateMachineTests.head(200), now: 5))
        pair.feed(.exchangeEnded(id: 1, error: nil, now: 6))
        guard case .response(let head, _, _)? = pair.outcome else {
            Issue.record("no response: \(String(describing: pair.outcome))")
            return
        }
        #expect(head.statusCode == 200)
    }
}
