import Foundation
import FormDataKit
import FormDataKitAF
import FormDataKitTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// FormDataKitAF's `appendPart(with:name:fileName:length:mimeType:)` with `length: -1`: the
/// stream is kept, read while sent, chunked; werkzeug reads the part exactly.
@Suite("AF stream part of unknown length")
struct AFStreamPartTests {
    @Test("length -1: Transfer-Encoding chunked, no Content-Length, the part exact at werkzeug")
    func unknownLength() async throws {
        let bytes = TransportTestSupport.randomData(size: 200_000, seed: 11)
        try await StreamPeer.with(.werkzeug) { peer in
            let pipe = try PipeFeed()
            let request = try AFHTTPRequestSerializer().multipartFormRequest(
                withMethod: "POST", urlString: peer.url().absoluteString, parameters: ["a": "b"]
            ) { form in
                form.appendPart(with: pipe.stream, name: "piped", fileName: "p.bin", length: -1, mimeType: "application/x-p")
            }
            #expect(request.value(forHTTPHeaderField: "Transfer-Encoding") == "chunked")
            #expect(request.value(forHTTPHeaderField: "Content-Length") == nil)
            pipe.feed(StreamedPartsTests.pieces(bytes, size: 50_000))
            let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: CurlTransport())
            manager.responseSerializer = AFHTTPResponseSerializer()
            let body: Data? = await withCheckedContinuation { continuation in
                manager.uploadTask(withStreamedRequest: request, progress: nil) { _, object, error in
                    if let error { Issue.record("\(error)") }
                    continuation.resume(returning: object as? Data)
                }.resume()
            }
            let result = try JSONDecoder().decode(StreamPeerResult.self, from: try #require(body))
            #expect(result.te == ["chunked"])
            #expect(result.files == [["piped", "p.bin", "application/x-p", String(bytes.count), SHA256.hex(bytes)]])
            #expect(result.fields == [["a", "b"]])
        }
    }
}
