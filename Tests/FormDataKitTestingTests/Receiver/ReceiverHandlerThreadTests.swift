import Foundation
@testable import FormDataKitTesting
import Testing

/// The receiver runs each request's handler on a thread (handlers block on the body), reused from
/// one request to the next: no thread is made per request. Each server has its own threads, so
/// other suites' receivers running at the same time do not change the count.
@Suite("Receiver: handler threads")
struct ReceiverHandlerThreadTests {
    /// The kernel thread ids the handler ran on.
    final class ThreadIDs: @unchecked Sendable {
        // `@unchecked`: `ids` is only touched under `lock`.
        private let lock = NSLock()
        private var ids: Set<String> = []
        func insert(_ id: String) { lock.withLock { _ = ids.insert(id) } }
        var count: Int { lock.withLock { ids.count } }
    }

    @Test("100 requests one after another run on reused handler threads, not a new thread each")
    func handlerThreadsAreReused() async throws {
        #if os(Linux)
        let seen = ThreadIDs()
        let server = try await LoopbackHTTPServer.start(host: "127.0.0.1", port: 0) { _, _ in
            // The kernel's thread id ("<pid>/task/<tid>"): not handed out again soon, unlike pthread_t.
            seen.insert((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?")
            return LoopbackHTTPServer.Response(status: 200)
        }
        for index in 0..<100 {
            let response = try await ReceiverHardeningTests.exchange(
                port: server.port, ReceiverHardeningTests.rawRequest("/n\(index)", body: Data("a=\(index)".utf8)), timeout: 30)
            #expect(response.status == 200)
        }
        await server.stop()
        // One thread serves them all: it counts as free before its answer goes out, so the next
        // request (sent once the answer arrives) always finds it free.
        #expect(seen.count == 1, "\(seen.count) handler threads for 100 sequential requests")
        #endif
    }
}
