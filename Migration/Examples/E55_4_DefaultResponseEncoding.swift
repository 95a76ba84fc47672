// Before (Objective-C, ASIHTTPRequest) — a PHP back end answers UTF-8 JSON as `text/html` with
// no charset; the app told ASI to read such replies as UTF-8:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setDefaultResponseEncoding:NSUTF8StringEncoding];
//     [request setPostValue:@"Zoë" forKey:@"name"];
//     [request startSynchronous];
//     NSString *reply = [request responseString];   // "{"greeting":"Grüß dich, Zoë"}"
//
// After (Swift): the same property. Without it the reply reads as ISO-8859-1 (ASI's default
// too), and every non-ASCII character comes back as two or three wrong ones.

import FormDataKit
import Foundation
import Testing

/// What the PHP back end does: answers UTF-8 text without naming a charset (PHP's default
/// `Content-Type: text/html`), echoing the `name` field. An in-process transport, so the example
/// needs no PHP.
final class CharsetlessBackEnd: FormDataTransport, @unchecked Sendable {
    struct Task: TransportTask { func cancel() {} }

    func start(_ request: TransportRequest, observer: any TransportObserver) -> any TransportTask {
        guard case .data(let bytes) = request.body else { fatalError("a small form comes in memory") }
        let body = String(decoding: bytes, as: UTF8.self)
        let name = body.split(separator: "&").first { $0.hasPrefix("name=") }.map { String($0.dropFirst(5)) }?.removingPercentEncoding ?? ""
        let reply = FormDataResponse(
            statusCode: 200, headers: ["Content-Type": "text/html"], body: Data("{\"greeting\":\"Grüß dich, \(name)\"}".utf8))
        DispatchQueue.global().async { observer.transportDidReceive(reply) }
        return Task()
    }
}

/// The port.
func greet(_ name: String, url: URL, transport: any FormDataTransport) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.defaultResponseEncoding = .utf8
    request.setPostValue(name, forKey: "name")
    request.transport = transport
    return request
}

@Suite("55.4 defaultResponseEncoding for a reply without a charset")
struct DefaultResponseEncodingExample {
    static let url = URL(string: "http://example.com/greet.php")!

    @Test func utf8ReplyReadsRight() {
        let request = greet("Zoë", url: Self.url, transport: CharsetlessBackEnd())
        #expect(request.startSynchronous() == nil)
        #expect(request.responseString == "{\"greeting\":\"Grüß dich, Zoë\"}")
    }

    @Test func withoutItTheReplyIsMojibake() {
        let request = FormDataRequest(url: Self.url)
        request.setPostValue("Zoë", forKey: "name")
        request.transport = CharsetlessBackEnd()
        #expect(request.startSynchronous() == nil)
        #expect(request.responseString == "{\"greeting\":\"GrÃ¼Ã\u{9F} dich, ZoÃ«\"}")
    }
}
