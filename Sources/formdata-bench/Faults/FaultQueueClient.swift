import FormDataKit
import Foundation

/// `formdata-bench --child fault-queue URL COUNT WIDTH FILE TIMEOUT RETRIES KEYED`: the queue
/// scenario's client, run inside the lab's client namespace. COUNT forms (an `id` field and FILE)
/// through one `NetworkQueue` WIDTH at a time, `timeOutSeconds = TIMEOUT`, `RetryPolicy` with
/// RETRIES retries and `shouldSendIdempotencyKey` when KEYED is `keyed` (else ASI's
/// `numberOfTimesToRetryOnTimeout = RETRIES` and no key); with `answer=BYTES downloads=DIR`, each
/// asks for an answer that long and writes it to DIR/<id>.bin (`downloadDestinationPath`); with
/// `retry-after`, each asks the server to answer its first arrival 503 and honours `Retry-After`.
/// Prints one ``Outcome`` as JSON.
enum FaultQueueClient {
    /// How the sends ended.
    struct Outcome: Codable {
        /// Sends that ended with a 200.
        var succeeded = 0
        /// The other sends, by how they ended (the error's case, or `status N`).
        var failures: [String: Int] = [:]
        /// The longest send, from its start to its end, in seconds.
        var longestSend = 0.0
        /// The whole queue, in seconds.
        var seconds = 0.0
    }

    /// Records each request's start and end from the queue's delegate calls.
    final class Timer: NetworkQueueDelegate, @unchecked Sendable {
        // `@unchecked`: `started` and `longest` are touched only under `lock`.
        private let lock = NSLock()
        private var started: [ObjectIdentifier: Double] = [:]
        private var longest = 0.0

        var longestSend: Double { lock.withLock { longest } }

        func requestStarted(_ request: FormDataRequest) {
            lock.withLock { started[ObjectIdentifier(request)] = Self.now() }
        }
        func requestFinished(_ request: FormDataRequest) { ended(request) }
        func requestFailed(_ request: FormDataRequest) { ended(request) }

        private func ended(_ request: FormDataRequest) {
            lock.withLock {
                guard let start = started.removeValue(forKey: ObjectIdentifier(request)) else { return }
                longest = max(longest, Self.now() - start)
            }
        }

        static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    }

    static func child(_ arguments: [String]) throws {
        guard arguments.count >= 7, let url = URL(string: arguments[0]), let count = Int(arguments[1]),
            let width = Int(arguments[2]), let timeout = Double(arguments[4]), let retries = Int(arguments[5])
        else {
            throw BenchError.usage(
                "fault-queue URL COUNT WIDTH FILE TIMEOUT RETRIES keyed|unkeyed [answer=BYTES downloads=DIR] [retry-after]")
        }
        let keyed = arguments[6] == "keyed"
        let options = Dictionary(
            arguments.dropFirst(7).map { option in
                let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
                return (parts[0], parts.count > 1 ? parts[1] : "")
            }, uniquingKeysWith: { $1 })
        // The response scenario: each answer BYTES long, written to DIR/<id>.bin.
        let download = options["answer"].flatMap { bytes in options["downloads"].map { (bytes: bytes, directory: $0) } }
        // The flapping scenario: the server answers each form's first arrival 503 with Retry-After.
        let busyFirst = options["retry-after"] != nil
        let timer = Timer()
        let queue = NetworkQueue()
        queue.maxConcurrentOperationCount = width
        queue.shouldCancelAllRequestsOnFailure = false
        queue.delegate = timer
        var requests: [FormDataRequest] = []
        for index in 0..<count {
            let request = FormDataRequest(url: url)
            request.transport = CurlTransport.shared
            request.timeOutSeconds = timeout
            if keyed {
                request.shouldSendIdempotencyKey = true
                request.retryPolicy = RetryPolicy(maximumRetries: retries, honoursRetryAfter: busyFirst)
            } else {
                request.numberOfTimesToRetryOnTimeout = retries
            }
            if busyFirst { request.addRequestHeader("X-Busy-First", value: "1") }
            if let download {
                request.addRequestHeader("X-Answer-Bytes", value: download.bytes)
                request.downloadDestinationPath = "\(download.directory)/\(index).bin"
            }
            request.addPostValue(String(index), forKey: "id")
            try request.addFile(arguments[3], forKey: "file")
            try queue.addOperation(request)
            requests.append(request)
        }
        let start = Timer.now()
        queue.go()
        queue.waitUntilAllOperationsAreFinished()
        var outcome = Outcome(longestSend: timer.longestSend, seconds: Timer.now() - start)
        for request in requests {
            if request.error == nil && request.responseStatusCode == 200 {
                outcome.succeeded += 1
            } else {
                let kind: String =
                    switch request.error {
                    case .timedOut?: "timedOut"
                    case let error?: String("\(error)".prefix { $0 != "(" && $0 != ":" })
                    case nil: "status \(request.responseStatusCode)"
                    }
                outcome.failures[kind, default: 0] += 1
            }
        }
        FileHandle.standardOutput.write(try JSONEncoder().encode(outcome) + Data("\n".utf8))
    }
}
