// Before (Objective-C, ASIHTTPRequest) — the old app's upload, recorded once against a local
// receiver so that the port can be compared with it:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:
//         [NSURL URLWithString:@"http://127.0.0.1:8080/upload"]];
//     [request setPostValue:@"Ada" forKey:@"name"];
//     [request startSynchronous];
//
// After (Swift, the migration kit): each side is captured by a receiver of its own on a free
// port (`defer { receiver.stopSynchronously() }` stops it from synchronous code), and the
// captures are compared tolerating the URL's scheme, host and port (`.host`, `--tolerate host`;
// `.all` includes it); the path and query still compare. `formdata build --charset NAME` builds
// a capture in a legacy charset for `formdata diff`.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

@Suite("55.9 Captures from receivers on different ports")
struct CapturesFromTwoReceiversExample {
    /// What a receiver on a port of its own recorded of the upload.
    static func capture() async throws -> FormSnapshot {
        try await Example.withDirectory { directory in
            let receiver = try await FormReceiver.start(recordingDirectory: directory)
            defer { receiver.stopSynchronously() }
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.setPostValue("Ada", forKey: "name")
            Example.prepareToSend(request)
            _ = try await request.start()
            let path = try #require(receiver.lastRequest?.capturePath)
            return try FormSnapshot(contentsOfCapture: URL(fileURLWithPath: path))
        }
    }

    @Test func equivalentToleratingTheHost() async throws {
        let legacy = try await Self.capture()
        let port = try await Self.capture()
        #expect(legacy.url != port.url)  // two ports
        #expect(legacy.matches(port, tolerating: [.boundary, .host]))
        #expect(legacy.matches(port, tolerating: .all))
    }
}
