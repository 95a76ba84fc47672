import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Every AF entry point sends a `User-Agent` (issue 55, point 5): AFNetworking set one in its
/// request serializer on Apple platforms only, so on Linux the serializer has none and the send
/// adds FormDataKit's default (`FormDataRequest.defaultUserAgentString`), never replacing one the
/// user set. Checked on what the embedded receiver got, over the default transport (curl on
/// Linux) and over URLSession.
@Suite("AF User-Agent")
struct AFUserAgentTests {
    /// The transports the checks run over.
    typealias Kind = AFTransportKind

    /// What a request without a `User-Agent` of its own goes out with: the serializer's default
    /// (AFNetworking's format, on Apple platforms), else FormDataKit's.
    static var expectedAgent: String {
        AFHTTPRequestSerializer.serializer().value(forHTTPHeaderField: "User-Agent") ?? FormDataRequest.defaultUserAgentString
    }

    /// The `User-Agent` values of the receiver's last request (one, when the rule holds).
    static func agents(_ receiver: FormReceiver) -> [String] {
        (receiver.lastRequest?.headers ?? []).filter { $0.name.caseInsensitiveCompare("User-Agent") == .orderedSame }.map(\.value)
    }

    /// Runs `operation` and waits for its success or failure block.
    static func run(_ operation: AFHTTPRequestOperation) async -> (any Error)? {
        await withCheckedContinuation { continuation in
            operation.setCompletionBlockWithSuccess(
                { _, _ in continuation.resume(returning: nil) }, failure: { _, error in continuation.resume(returning: error) })
            operation.start()
        }
    }

    /// A multipart request as the serializer builds it.
    static func multipartRequest(_ url: URL, serializer: AFHTTPRequestSerializer = .serializer()) throws -> URLRequest {
        try serializer.multipartFormRequest(
            withMethod: "POST", urlString: url.absoluteString, parameters: ["album": "2026"],
            constructingBodyWith: { form in
                form.appendPart(withFileData: Data("photo".utf8), name: "photo", fileName: "p.jpg", mimeType: "image/jpeg")
            })
    }

    @Test("AFHTTPSessionManager: GET, POST, the multipart POST and the streamed upload task send a User-Agent", arguments: Kind.allCases)
    func sessionManager(kind: Kind) async throws {
        try await TestSupport.withReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: receiver.baseURL, sessionConfiguration: nil, transport: kind.transport)
            let get = await outcome { manager.get("get", parameters: nil, headers: nil, progress: nil, success: $0, failure: $1) }
            #expect(get.outcome.error == nil)
            #expect(Self.agents(receiver) == [Self.expectedAgent])
            let post = await outcome { manager.post("post", parameters: ["a": "1"], headers: nil, progress: nil, success: $0, failure: $1) }
            #expect(post.outcome.error == nil)
            #expect(Self.agents(receiver) == [Self.expectedAgent])
            let multipart = await outcome {
                manager.post(
                    "upload", parameters: ["album": "2026"], headers: nil,
                    constructingBodyWith: { form in
                        form.appendPart(withFileData: Data("photo".utf8), name: "photo", fileName: "p.jpg", mimeType: "image/jpeg")
                    }, progress: nil, success: $0, failure: $1)
            }
            #expect(multipart.outcome.error == nil)
            #expect(receiver.lastRequest?.form?.file("photo")?.data == Data("photo".utf8))
            #expect(Self.agents(receiver) == [Self.expectedAgent])
            // The streamed upload task, with a request the serializer built.
            let request = try Self.multipartRequest(receiver.url("/streamed"))
            let streamed: (any Error)? = await withCheckedContinuation { continuation in
                manager.uploadTask(withStreamedRequest: request, progress: nil) { _, _, error in continuation.resume(returning: error) }
                    .resume()
            }
            #expect(streamed == nil)
            #expect(receiver.lastRequest?.path == "/streamed")
            #expect(Self.agents(receiver) == [Self.expectedAgent])
        }
    }

    @Test("AFHTTPRequestOperationManager's multipart POST sends a User-Agent", arguments: Kind.allCases)
    func operationManager(kind: Kind) async throws {
        try await TestSupport.withReceiver { receiver in
            let manager = AFHTTPRequestOperationManager(baseURL: receiver.baseURL, transport: kind.transport)
            let error: (any Error)? = await withCheckedContinuation { continuation in
                _ = manager.post(
                    "upload", parameters: ["album": "2026"],
                    constructingBodyWith: { form in
                        form.appendPart(withFileData: Data("photo".utf8), name: "photo", fileName: "p.jpg", mimeType: "image/jpeg")
                    }, success: { _, _ in continuation.resume(returning: nil) },
                    failure: { _, error in continuation.resume(returning: error) })
            }
            #expect(error == nil)
            #expect(receiver.lastRequest?.form?.value("album") == "2026")
            #expect(Self.agents(receiver) == [Self.expectedAgent])
        }
    }

    @Test("AFHTTPRequestOperation: a serializer-built request and a bare URLRequest send a User-Agent", arguments: Kind.allCases)
    func operations(kind: Kind) async throws {
        try await TestSupport.withReceiver { receiver in
            let built = AFHTTPRequestOperation(request: try Self.multipartRequest(receiver.url("/upload")), transport: kind.transport)
            #expect(await Self.run(built) == nil)
            #expect(receiver.lastRequest?.form?.value("album") == "2026")
            #expect(Self.agents(receiver) == [Self.expectedAgent])
            // Not from the serializer: no default headers at all, so even on Apple platforms the
            // send adds FormDataKit's.
            let bare = AFHTTPRequestOperation(request: URLRequest(url: receiver.url("/bare")), transport: kind.transport)
            #expect(await Self.run(bare) == nil)
            #expect(receiver.lastRequest?.path == "/bare")
            #expect(Self.agents(receiver) == [FormDataRequest.defaultUserAgentString])
        }
    }

    @Test(
        "a User-Agent the user set is sent as set: serializer, per-request header, session configuration, request", arguments: Kind.allCases
    )
    func theUsersOwnIsKept(kind: Kind) async throws {
        try await TestSupport.withReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: receiver.baseURL, sessionConfiguration: nil, transport: kind.transport)
            manager.requestSerializer.setValue("Serializer/1.0", forHTTPHeaderField: "User-Agent")
            _ = await outcome { manager.get("a", parameters: nil, headers: nil, progress: nil, success: $0, failure: $1) }
            #expect(Self.agents(receiver) == ["Serializer/1.0"])
            // Per-request headers, in another case: still the one header.
            _ = await outcome {
                manager.get("b", parameters: nil, headers: ["user-agent": "PerRequest/2.0"], progress: nil, success: $0, failure: $1)
            }
            #expect(Self.agents(receiver) == ["PerRequest/2.0"])

            // The session configuration's, when the request has none (the serializer's removed).
            let configuration = URLSessionConfiguration.default
            configuration.httpAdditionalHeaders = ["User-Agent": "Session/3.0"]
            let configured = AFHTTPSessionManager(baseURL: receiver.baseURL, sessionConfiguration: configuration, transport: kind.transport)
            configured.requestSerializer.setValue(nil, forHTTPHeaderField: "User-Agent")
            _ = await outcome { configured.get("c", parameters: nil, headers: nil, progress: nil, success: $0, failure: $1) }
            #expect(Self.agents(receiver) == ["Session/3.0"])

            var request = URLRequest(url: receiver.url("/d"))
            request.setValue("Operation/4.0", forHTTPHeaderField: "User-Agent")
            #expect(await Self.run(AFHTTPRequestOperation(request: request, transport: kind.transport)) == nil)
            #expect(Self.agents(receiver) == ["Operation/4.0"])
        }
    }
}
