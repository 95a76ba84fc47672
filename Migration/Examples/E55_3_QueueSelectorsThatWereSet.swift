// Before (Objective-C, ASIHTTPRequest) — one importer is the delegate of two queues that set
// different selectors: photos report each upload, the CSV rows only their failures:
//
//     [photoQueue setDelegate:self];
//     [photoQueue setRequestDidFinishSelector:@selector(photoDone:)];
//     [photoQueue setQueueDidFinishSelector:@selector(batchDone:)];
//     [rowQueue setDelegate:self];
//     [rowQueue setRequestDidFailSelector:@selector(rowFailed:)];
//     [rowQueue setQueueDidFinishSelector:@selector(batchDone:)];
//
// After (Swift): each queue's `delegateCalls` lists the selectors that were set; the method
// names are the protocol's. A queue's `events` still carry everything.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port of the importer: the delegate of both queues.
final class Importer: NetworkQueueDelegate, @unchecked Sendable {
    let log = Tally<[String]>([])
    private func name(_ request: FormDataRequest) -> String { request.userInfo?["name"] as? String ?? "?" }
    func requestFinished(_ request: FormDataRequest) { log.update { $0.append("done \(name(request))") } }
    func requestFailed(_ request: FormDataRequest) { log.update { $0.append("failed \(name(request))") } }
    func queueFinished(_ queue: NetworkQueue) { log.update { $0.append("batch") } }

    func queue(_ calls: NetworkQueue.DelegateCalls, _ uploads: [(name: String, url: URL)]) throws -> NetworkQueue {
        let queue = NetworkQueue()
        queue.delegate = self
        queue.delegateCalls = calls
        queue.shouldCancelAllRequestsOnFailure = false
        for upload in uploads {
            let request = FormDataRequest(url: upload.url)
            request.userInfo = ["name": upload.name]
            request.setPostValue(upload.name, forKey: "item")
            Example.prepareToSend(request)
            try queue.addOperation(request)
        }
        return queue
    }
}

@Suite("55.3 Each queue calls what the ported code asked for")
struct QueueSelectorsThatWereSetExample {
    static func run(_ queue: NetworkQueue) async {
        await Example.drain(queue)
    }

    @Test func photosReportUploadsRowsReportFailures() async throws {
        try await Example.withReceiver { receiver in
            let importer = Importer()
            let photos = try importer.queue([.requestFinished, .queueFinished], [("photo", receiver.url("/photos"))])
            await Self.run(photos)
            #expect(importer.log.current == ["done photo", "batch"])
            let closed = URL(string: "http://127.0.0.1:1/rows")!
            let rows = try importer.queue([.requestFailed, .queueFinished], [("row1", receiver.url("/rows")), ("row2", closed)])
            await Self.run(rows)
            // The row that arrived is not reported (no requestDidFinishSelector); the one that failed is.
            #expect(importer.log.current == ["done photo", "batch", "failed row2", "batch"])
            #expect(receiver.requests.compactMap { $0.form?.value("item") }.sorted() == ["photo", "row1"])
        }
    }
}
