import Foundation
import FormDataKit
import FormDataKitTesting
import Testing

/// `callbackQueue`: where the delegate and blocks run (ASI called them on the main thread).
@Suite("callbackQueue: delegate and blocks on the chosen queue, in ASI's order; startSynchronous on main never deadlocks")
struct CallbackQueueTests {
    /// A delegate that notes, for every call, whether it ran on the queue marked with `key`.
    final class QueueCheckingDelegate: FormDataRequestDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [(String, Bool)] = []
        let key: DispatchSpecificKey<String>
        init(key: DispatchSpecificKey<String>) { self.key = key }
        private func note(_ name: String) {
            let onQueue = DispatchQueue.getSpecific(key: key) == "callbacks"
            lock.withLock { if calls.last?.0 != name || name != "sent" { calls.append((name, onQueue)) } }
        }
        var names: [String] { lock.withLock { calls.map(\.0) } }
        var allOnQueue: Bool { lock.withLock { calls.allSatisfy(\.1) } }
        func requestStarted(_ request: FormDataRequest) { note("started") }
        func request(_ request: FormDataRequest, didReceiveResponseHeaders responseHeaders: [String: String]) { note("headers") }
        func request(_ request: FormDataRequest, didSendBytes bytes: Int64) { note("sent") }
        func requestFinished(_ request: FormDataRequest) { note("finished") }
        func requestFailed(_ request: FormDataRequest) { note("failed") }
    }

    @Test("with a queue of the caller's, every delegate call and block runs on it, in order, before start() returns")
    func ownQueue() async throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "test.callbacks")
        queue.setSpecific(key: key, value: "callbacks")
        let receiver = try await FormReceiver.start()
        let request = FormDataRequest(url: receiver.url("/upload"))
        request.transport = CurlTransport()
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        request.callbackQueue = queue
        request.addData(Data(repeating: 1, count: 300_000), withFileName: "a.bin", andContentType: nil, forKey: "f")
        let delegate = QueueCheckingDelegate(key: key)
        request.delegate = delegate
        let blockOnQueue = Locked(false)
        request.completionBlock = { blockOnQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) == "callbacks" } }
        _ = try await request.start()
        await receiver.stop()
        #expect(
            delegate.names == ["started", "sent", "headers", "finished"] || delegate.names == ["started", "headers", "sent", "finished"],
            "\(delegate.names)")
        #expect(delegate.allOnQueue)
        #expect(blockOnQueue.current)
        #expect(request.callbackQueue === queue)
    }

    @Test("the main queue with startSynchronous on the main actor: no deadlock, callbacks on the main queue")
    func mainQueueAndStartSynchronousOnMain() async throws {
        let receiver = try await FormReceiver.start()
        let request = FormDataRequest(url: receiver.url("/upload"))
        request.transport = CurlTransport()
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        request.callbackQueue = .main
        request.setPostValue("1", forKey: "a")
        // On Linux the main queue may be served by a worker thread (dispatch_main), so the check
        // is the queue, not Thread.isMainThread.
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let finishedOnMain = Locked<Bool?>(nil)
        request.completionBlock = { finishedOnMain.withLock { $0 = DispatchQueue.getSpecific(key: key) == "main" } }
        let error = await MainActor.run { request.startSynchronous() }
        await receiver.stop()
        #expect(error == nil)
        #expect(request.responseStatusCode == 200)
        #expect(finishedOnMain.current == true)
    }

    @Test("with a queue of the caller's and only a started block, startSynchronous returns after the block ran, not before")
    func onlyStartedBlockOnOwnQueue() async throws {
        let queue = DispatchQueue(label: "test.callbacks.busy")
        let receiver = try await FormReceiver.start()
        let request = FormDataRequest(url: receiver.url("/upload"))
        request.transport = CurlTransport()
        request.timeOutSeconds = TransportTestSupport.patientTimeout
        request.callbackQueue = queue
        request.setPostValue("1", forKey: "a")
        let started = Locked(false)
        request.startedBlock = { started.withLock { $0 = true } }
        // The callback queue is busy until startSynchronous has returned, or for half a second:
        // the started block waits behind it, and so must the return (no completion block or
        // delegate: nothing else of the caller's runs at the end).
        let returned = DispatchSemaphore(value: 0)
        queue.async { _ = returned.wait(timeout: .now() + 0.5) }
        let error = await TransportTestSupport.blocking { request.startSynchronous() }
        let startedWhenReturned = started.current
        returned.signal()
        await receiver.stop()
        #expect(error == nil)
        #expect(startedWhenReturned, "startSynchronous returned before the started block ran on the callback queue")
    }
}
