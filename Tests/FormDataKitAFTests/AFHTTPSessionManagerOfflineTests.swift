import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The manager without a server: base URLs, request building, copies, build failures.
extension AFHTTPSessionManagerTests {
    // MARK: - Offline: base URL and request building

    @Test func sharedManagerIsNotEqualToInitedManager() {
        let manager = AFHTTPSessionManager.manager()
        #expect(manager !== AFHTTPSessionManager(baseURL: URL(string: "https://httpbin.org")))
        #expect(manager.baseURL == nil)
        #expect(type(of: manager.requestSerializer) == AFHTTPRequestSerializer.self)
        #expect(manager.responseSerializer is AFJSONResponseSerializer)
    }

    @Test func baseURLGetsATrailingSlashOnlyWithAPath() {
        let cases: [(String, String)] = [
            ("http://example.com/v1", "http://example.com/v1/"),
            ("http://example.com/v1/", "http://example.com/v1/"),
            ("http://example.com/v1?x=1", "http://example.com/v1/?x=1"),
            ("https://site", "https://site"),
        ]
        for (given, expected) in cases {
            #expect(AFHTTPSessionManager(baseURL: URL(string: given)).baseURL?.absoluteString == expected, "\(given)")
        }
    }

    @Test func relativePathsResolveAsNSURLResolvesThem() {
        let v1 = AFHTTPSessionManager(baseURL: URL(string: "http://example.com/v1/"))
        let cases: [(AFHTTPSessionManager, String, String?)] = [
            (v1, "foo", "http://example.com/v1/foo"),
            (v1, "foo?bar=baz", "http://example.com/v1/foo?bar=baz"),
            (v1, "/foo", "http://example.com/foo"),
            (v1, "foo/", "http://example.com/v1/foo/"),
            (v1, "/foo/", "http://example.com/foo/"),
            (v1, "http://example2.com/", "http://example2.com/"),
            (v1, "?a=b", "http://example.com/v1/?a=b"),
            (v1, "../x", "http://example.com/x"),
            (v1, "//other.com/p", "http://other.com/p"),
            (AFHTTPSessionManager(baseURL: URL(string: "http://example.com")), "get", "http://example.com/get"),
            (AFHTTPSessionManager.manager(), "http://x/y", "http://x/y"),
            (AFHTTPSessionManager(baseURL: URL(string: "https://apple.com/")), "", "https://apple.com/"),
            (v1, "foo bar", nil),
        ]
        // Each twice, and the list twice: the last parse is kept (AFURLParseMemo), and a string
        // resolves the same whether it is the one kept or not.
        for (manager, path, expected) in cases + cases {
            #expect(manager.resolvedURLString(path) == expected, "\(path)")
            #expect(manager.resolvedURLString(path) == expected, "\(path), again")
            let task = manager.dataTask(
                withHTTPMethod: "GET", urlString: path, parameters: nil, headers: nil,
                uploadProgress: nil, downloadProgress: nil, success: nil, failure: nil)
            #expect(task?.originalRequest.url?.absoluteString == expected, "\(path)")
            #expect(task?.state == (expected == nil ? nil : .suspended))
        }
    }

    @Test func serializationErrorGeneratesErrorAndNilTaskForGET() async {
        let manager = AFHTTPSessionManager(baseURL: URL(string: "https://httpbin.org"))
        let custom = NSError(domain: "Custom", code: -1)
        manager.requestSerializer.setQueryStringSerializationWith { _, _ in throw custom }
        let (task, result) = await outcome { success, failure in
            manager.get("test", parameters: ["key": "value"], headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(task == nil)
        guard case .failure(let failedTask, let error) = result else {
            Issue.record("expected failure")
            return
        }
        #expect(failedTask == nil)
        let sameObject = (error as AnyObject) === custom
        #expect(sameObject)
    }

    @Test func perRequestHeadersReplaceTheSerializersDefaults() async throws {
        let receiver = try await FormReceiver.start()
        let manager = self.manager(receiver.baseURL)
        manager.requestSerializer.setValue("foo value", forHTTPHeaderField: "X-Foo")
        manager.requestSerializer.setValue("bar value", forHTTPHeaderField: "X-Bar")
        let (task, result) = await outcome { success, failure in
            let task = manager.dataTask(
                withHTTPMethod: "GET", urlString: "get", parameters: nil, headers: ["X-Foo": "request value"],
                uploadProgress: nil, downloadProgress: nil, success: success, failure: failure)
            #expect(task?.state == .suspended)
            task?.resume()
            return task
        }
        await receiver.stop()
        #expect(result.error == nil)
        #expect(task?.originalRequest.value(forHTTPHeaderField: "X-Foo") == "request value")
        #expect(task?.originalRequest.value(forHTTPHeaderField: "X-Bar") == "bar value")
        #expect(task?.state == .completed)
        #expect(receiver.lastRequest?.header("X-Foo") == "request value")
        #expect(receiver.lastRequest?.header("X-Bar") == "bar value")
    }

    @Test func canBeCopied() {
        let manager = AFHTTPSessionManager(baseURL: URL(string: "http://example.com/v1/"))
        manager.requestSerializer.setValue("v", forHTTPHeaderField: "X-Copied")
        let copy = manager.copy()
        #expect(copy !== manager)
        #expect(copy.baseURL == manager.baseURL)
        #expect(copy.requestSerializer !== manager.requestSerializer)
        #expect(copy.requestSerializer.value(forHTTPHeaderField: "X-Copied") == "v")
        let custom = self.manager(URL(string: "http://example.com/")!).copy()
        #expect(custom.transport as? URLSessionTransport === Self.transport)
    }

    @Test func multipartBuildFailuresGoToFailureWithANilTask() async {
        let manager = AFHTTPSessionManager(baseURL: URL(string: "http://example.com/"))
        let missing = URL(fileURLWithPath: "/nonexistent/FormDataKitAF/missing.jpg")
        let (task, result) = await outcome { success, failure in
            manager.post(
                "upload", parameters: nil, headers: nil,
                constructingBodyWith: { form in
                    try form.appendPart(withFileURL: missing, name: "photo")
                }, progress: nil, success: success, failure: failure)
        }
        #expect(task == nil)
        #expect(result.error as? AFURLRequestSerializationError == .fileNotReachable(missing))
    }
}
