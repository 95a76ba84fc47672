import FormDataKit
@testable import FormDataKitTesting
import Foundation
import Testing

/// Issue 55, point 9: the `host` tolerance (captures from receivers on different ports) and the
/// receiver's synchronous stop.
@Suite("Host tolerance and the synchronous stop")
struct HostToleranceTests {
    private static func snapshot(_ url: String) throws -> FormSnapshot {
        try FormSnapshot(
            method: "POST", url: url, headers: [ReceivedHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Data("a=1".utf8))
    }

    @Test("host lets scheme, host and port differ, not the path or query; all includes it")
    func hostTolerance() throws {
        let a = try Self.snapshot("http://127.0.0.1:40001/upload?x=1")
        let b = try Self.snapshot("http://127.0.0.1:40002/upload?x=1")
        #expect(
            a.differences(from: b) == [
                FormSnapshotDifference(
                    location: "url", lhs: "\"http://127.0.0.1:40001/upload?x=1\"", rhs: "\"http://127.0.0.1:40002/upload?x=1\"")
            ])
        #expect(a.matches(b, tolerating: [.boundary, .host]))
        #expect(a.matches(b, tolerating: .all))
        #expect(a.matches(try Self.snapshot("https://staging.example/upload?x=1"), tolerating: .host))
        #expect(!a.matches(try Self.snapshot("http://127.0.0.1:40002/upload?x=2"), tolerating: .all))
        #expect(!a.matches(try Self.snapshot("http://127.0.0.1:40002/other?x=1"), tolerating: .all))
        #expect(FormSnapshotTolerance(name: "host") == .host)
        #expect(FormSnapshotTolerance(name: "origin") == .host)
        #expect(FormSnapshotTolerance.all.contains(.host))
    }

    @Test("Two receivers on different ports: their captures are equivalent under .host")
    func twoReceivers() async throws {
        var snapshots: [FormSnapshot] = []
        for _ in 0..<2 {
            let receiver = try await FormReceiver.start()
            defer { receiver.stopSynchronously() }
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.addPostValue("Ada", forKey: "name")
            _ = try await request.start()
            let received = try #require(receiver.lastRequest)
            let form = try #require(received.form)
            #expect(form.value("name") == "Ada")
            snapshots.append(try FormSnapshot(request))
            snapshots[snapshots.count - 1].url = receiver.url("/upload").absoluteString
        }
        #expect(!snapshots[0].matches(snapshots[1]))
        #expect(snapshots[0].matches(snapshots[1], tolerating: [.boundary, .host]))
    }

    private static func refuses(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result != 0
    }

    @Test("stopSynchronously off an event loop: the port refuses connections when it returns")
    func stopsBeforeReturning() async throws {
        let receiver = try await FormReceiver.start()
        #expect(!Self.refuses(receiver.port))
        receiver.stopSynchronously()
        #expect(Self.refuses(receiver.port))
        receiver.stopSynchronously()  // again: nothing
        await receiver.stop()
    }

    @Test("stopSynchronously on an event-loop thread returns without waiting; the closes complete on the loop")
    func onEventLoop() async throws {
        let receiver = try await FormReceiver.start()
        try await LoopbackHTTPServer.onEventLoop { receiver.stopSynchronously() }
        await receiver.stop()  // waits for the closes it started
        #expect(Self.refuses(receiver.port))
    }
}
