import FormDataKit
import FormDataKitAF
import Foundation

/// The ways a user sends W7's small form, each measured as a row of its own so that no entry
/// point is tuned at the expense of another: ASI's `startSynchronous()` and
/// `startAsynchronous()` with blocks, `try await start()`, a `NetworkQueue`, and AFNetworking's
/// two managers. Every one sends through `CurlTransport.shared` and fails the child unless every
/// answer is 200.
enum SmallFormsEntryPoint: String, CaseIterable {
    case synchronous = "sync"
    case blocks
    case await
    case queue
    case afSession = "af-session"
    case afOperation = "af-operation"

    /// The row's tool name.
    var tool: String {
        switch self {
        case .synchronous: "FormDataKit startSynchronous()"
        case .blocks: "FormDataKit startAsynchronous() + blocks"
        case .await: "FormDataKit try await start()"
        case .queue: "FormDataKit NetworkQueue"
        case .afSession: "FormDataKitAF AFHTTPSessionManager post"
        case .afOperation: "FormDataKitAF AFHTTPRequestOperationManager post"
        }
    }

    /// The entry points measured in a mode: one at a time (`sequential`) or `inFlight` at once.
    /// `startSynchronous()` sends one at a time only.
    static func measured(sequential: Bool) -> [SmallFormsEntryPoint] {
        sequential ? allCases : allCases.filter { $0 != .synchronous }
    }

    /// The entry point an argument list without one uses (what older builds measured).
    static func legacyDefault(sequential: Bool) -> SmallFormsEntryPoint { sequential ? .synchronous : .blocks }

    /// Sends the form `count` times to `url`, at most `inFlight` at once.
    func send(count: Int, inFlight: Int, url: URL, file: String) throws {
        switch self {
        case .synchronous: try Self.sendSynchronously(count: count, url: url, file: file)
        case .blocks: try Self.sendWithBlocks(count: count, inFlight: inFlight, url: url, file: file)
        case .await: try Self.sendAwaiting(count: count, inFlight: inFlight, url: url, file: file)
        case .queue: try Self.sendThroughQueue(count: count, inFlight: inFlight, url: url, file: file)
        case .afSession: try Self.sendThroughSessionManager(count: count, inFlight: inFlight, url: url, file: file)
        case .afOperation: try Self.sendThroughOperationManager(count: count, inFlight: inFlight, url: url, file: file)
        }
    }

    /// A new request with W7's three fields and file part, then `prepare`d (W9: its transport
    /// and HTTP version).
    static func form(_ url: URL, _ file: String, prepare: (FormDataRequest) -> Void = { _ in }) throws -> FormDataRequest {
        let request = FormDataRequest(url: url)
        request.transport = CurlTransport.shared
        request.timeOutSeconds = 60
        for (key, value) in SmallFormsWorkload.fields { request.addPostValue(value, forKey: key) }
        try request.addFile(file, forKey: "file")
        prepare(request)
        return request
    }

    /// As an ASI caller sends in a loop.
    static func sendSynchronously(count: Int, url: URL, file: String) throws {
        for index in 0..<count {
            let request = try form(url, file)
            if let error = request.startSynchronous() { throw BenchError.childFailed("w7: send \(index + 1) failed: \(error)") }
            guard request.responseStatusCode == 200 else {
                throw BenchError.childFailed("w7: send \(index + 1): status \(request.responseStatusCode)")
            }
        }
    }

    /// `startAsynchronous()` with a completion and a failure block, `inFlight` slots.
    static func sendWithBlocks(
        count: Int, inFlight: Int, url: URL, file: String, prepare: (FormDataRequest) -> Void = { _ in }
    ) throws {
        let slots = DispatchSemaphore(value: max(1, inFlight))
        let done = DispatchGroup()
        let failures = FailureLog()
        for _ in 0..<count {
            slots.wait()
            let request = try form(url, file, prepare: prepare)
            done.enter()
            request.completionBlock = { [unowned request] in
                if request.responseStatusCode != 200 { failures.add("status \(request.responseStatusCode)") }
                slots.signal()
                done.leave()
            }
            request.failedBlock = { [unowned request] in
                failures.add("\(request.error.map { "\($0)" } ?? "failed")")
                slots.signal()
                done.leave()
            }
            request.startAsynchronous()
        }
        done.wait()
        try failures.check(count)
    }

    /// `try await start()`: one at a time, in a loop in one task (as a user writes it); in
    /// flight, from a task group of `inFlight` child tasks.
    static func sendAwaiting(count: Int, inFlight: Int, url: URL, file: String) throws {
        let failures = FailureLog()
        let finished = DispatchSemaphore(value: 0)
        @Sendable func sendOne() async {
            do {
                let response = try await form(url, file).start()
                if response.statusCode != 200 { failures.add("status \(response.statusCode)") }
            } catch {
                failures.add("\(error)")
            }
        }
        Task {
            if inFlight <= 1 {
                for _ in 0..<count { await sendOne() }
            } else {
                await withTaskGroup(of: Void.self) { group in
                    for index in 0..<count {
                        if index >= inFlight { await group.next() }
                        group.addTask { await sendOne() }
                    }
                }
            }
            finished.signal()
        }
        finished.wait()
        try failures.check(count)
    }

    /// One `NetworkQueue` running `inFlight` at a time, every request added before `go()`.
    static func sendThroughQueue(count: Int, inFlight: Int, url: URL, file: String) throws {
        let queue = NetworkQueue()
        queue.maxConcurrentOperationCount = inFlight
        queue.maximumConcurrentRequestsPerHost = inFlight
        var requests: [FormDataRequest] = []
        for _ in 0..<count {
            let request = try form(url, file)
            requests.append(request)
            try queue.addOperation(request)
        }
        queue.go()
        queue.waitUntilAllOperationsAreFinished()
        let failures = FailureLog()
        for request in requests where request.responseStatusCode != 200 {
            failures.add(request.error.map { "\($0)" } ?? "status \(request.responseStatusCode)")
        }
        try failures.check(count)
    }

    /// The AF 3 session manager's multipart `post`, `inFlight` slots.
    static func sendThroughSessionManager(count: Int, inFlight: Int, url: URL, file: String) throws {
        let manager = AFHTTPSessionManager(baseURL: nil, sessionConfiguration: nil, transport: CurlTransport.shared)
        let slots = DispatchSemaphore(value: max(1, inFlight))
        let done = DispatchGroup()
        let failures = FailureLog()
        let fileURL = URL(fileURLWithPath: file)
        for _ in 0..<count {
            slots.wait()
            done.enter()
            let task = manager.post(
                url.absoluteString, parameters: fieldParameters, headers: nil,
                constructingBodyWith: { try $0.appendPart(withFileURL: fileURL, name: "file") }, progress: nil,
                success: { _, _ in
                    slots.signal()
                    done.leave()
                },
                failure: { _, error in
                    failures.add("\(error)")
                    slots.signal()
                    done.leave()
                })
            if task == nil { throw BenchError.childFailed("w7: the session manager built no task") }
        }
        done.wait()
        try failures.check(count)
    }

    /// The AF 2 operation manager's multipart `post`, its operation queue `inFlight` wide.
    static func sendThroughOperationManager(count: Int, inFlight: Int, url: URL, file: String) throws {
        let manager = AFHTTPRequestOperationManager(baseURL: nil, transport: CurlTransport.shared)
        manager.operationQueue.maxConcurrentOperationCount = inFlight
        let done = DispatchGroup()
        let failures = FailureLog()
        let fileURL = URL(fileURLWithPath: file)
        for _ in 0..<count {
            done.enter()
            let operation = manager.post(
                url.absoluteString, parameters: fieldParameters,
                constructingBodyWith: { try $0.appendPart(withFileURL: fileURL, name: "file") },
                success: { _, _ in done.leave() },
                failure: { _, error in
                    failures.add("\(error)")
                    done.leave()
                })
            if operation == nil { throw BenchError.childFailed("w7: the operation manager built no operation") }
        }
        done.wait()
        try failures.check(count)
    }

    /// W7's fields as AF parameters.
    static var fieldParameters: [String: Any] {
        Dictionary(uniqueKeysWithValues: SmallFormsWorkload.fields.map { ($0.0, $0.1 as Any) })
    }
}

extension FailureLog {
    /// Throws the first failure, with how many of `count` sends failed.
    func check(_ count: Int) throws {
        if let first { throw BenchError.childFailed("w7: \(self.count) of \(count) failed; first: \(first)") }
    }
}
