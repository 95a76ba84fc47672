// Before (Objective-C, ASIHTTPRequest) — a sync controller is the delegate of every request and
// of their queue; it only cares that each upload finished and that the batch did:
//
//     @interface SyncController : NSObject <ASIHTTPRequestDelegate>
//     …
//     [queue setDelegate:self];
//     [queue setQueueDidFinishSelector:@selector(syncDone:)];
//     for (Note *note in dirtyNotes) {
//         ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//         [request setDelegate:self];                     // requestFinished: per note
//         [request setPostValue:note.text forKey:@"text"];
//         [queue addOperation:request];
//     }
//     [queue go];
//
// After (Swift): one class adopts both protocols and implements only what it needs; the queue
// is told it asked for `queueFinished` alone (ASI called only the selectors that were set).

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port of the controller.
final class NoteSyncController: FormDataRequestDelegate, NetworkQueueDelegate, @unchecked Sendable {
    let synced = Tally<[String]>([])
    let batches = Tally<Int>(0)
    func requestFinished(_ request: FormDataRequest) { synced.update { $0.append(request.url.lastPathComponent) } }
    func queueFinished(_ queue: NetworkQueue) { batches.update { $0 += 1 } }

    func sync(_ notes: [String], to url: URL) throws -> NetworkQueue {
        let queue = NetworkQueue()
        queue.delegate = self
        queue.delegateCalls = [.queueFinished]
        for (index, text) in notes.enumerated() {
            let request = FormDataRequest(url: url.appendingPathComponent("note\(index)"))
            request.delegate = self
            request.setPostValue(text, forKey: "text")
            Example.prepareToSend(request)
            try queue.addOperation(request)
        }
        return queue
    }
}

@Suite("55.2 One delegate for the requests and the queue")
struct OneDelegateForRequestsAndQueueExample {
    @Test func eachNoteOnceThenTheBatch() async throws {
        try await Example.withReceiver { receiver in
            let controller = NoteSyncController()
            let queue = try controller.sync(["milk", "eggs"], to: receiver.url("/notes"))
            await Example.drain(queue)
            #expect(controller.synced.current.sorted() == ["note0", "note1"])
            #expect(controller.batches.current == 1)
            #expect(Set(receiver.requests.compactMap { $0.form?.value("text") }) == ["milk", "eggs"])
        }
    }
}
