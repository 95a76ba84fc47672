// Before (Objective-C, ASIHTTPRequest) — a progress bar for one upload and one for the batch:
//
//     [request setUploadProgressDelegate:photoBar];      // photoBar.progress = 0…1
//     [queue setUploadProgressDelegate:batchBar];
//     [queue setShowAccurateProgress:YES];
//
// After (Swift): on Linux a `Progress` cannot be observed with KVO, so the bars are fed by
// blocks — the request's `uploadProgressBlock` (bytes sent so far, body length) and the queue's
// `progressBlock` (the batch's counters and fractions), called in order with the delegates.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// Stands in for a progress bar: remembers every value it was set to.
final class ProgressBar: @unchecked Sendable {
    private let lock = NSLock()
    private var set: [Double] = []
    var values: [Double] { lock.withLock { set } }
    func set(_ value: Double) { lock.withLock { set.append(value) } }
}

@Suite("55.10 Progress without KVO")
struct ProgressWithoutKVOExample {
    @Test func barsForOneUploadAndTheBatch() async throws {
        try await Example.withReceiver { receiver in
            let (photoBar, batchBar) = (ProgressBar(), ProgressBar())
            let queue = NetworkQueue()
            queue.showAccurateProgress = true
            queue.progressBlock = { progress in batchBar.set(progress.uploadFraction) }
            for index in 0..<3 {
                let request = FormDataRequest(url: receiver.url("/photos"))
                let photo = Data(repeating: UInt8(index), count: 150_000)
                request.addData(photo, withFileName: "p\(index).jpg", andContentType: "image/jpeg", forKey: "photo")
                if index == 0 {
                    request.uploadProgressBlock = { sent, length in photoBar.set(Double(sent) / Double(max(length, 1))) }
                }
                Example.prepareToSend(request)
                try queue.addOperation(request)
            }
            await Example.drain(queue)
            for bar in [photoBar, batchBar] {
                let values = bar.values
                #expect(values.last == 1.0)
                #expect(values == values.sorted(), "a bar never moves back")
            }
            #expect(photoBar.values.contains { $0 > 0 && $0 < 1 }, "the photo's bar moved before it was full")
            #expect(receiver.requests.count == 3)
        }
    }
}
