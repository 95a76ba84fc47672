// Before (Objective-C, ASIHTTPRequest) — a backup queue is given five files at once and then one
// more at a time as the app finds them, while a single progress bar covers everything:
//
//     [queue setShowAccurateProgress:NO];
//     for (NSString *path in firstFive) [queue addOperation:[self uploadFor:path]];
//     [queue go];
//     …later, one by one, even after the first five are done:
//     [queue addOperation:[self uploadFor:nextPath]];
//     …
//     [label setText:[NSString stringWithFormat:@"%llu of %llu",
//         [queue bytesUploadedSoFar], [queue totalBytesToUpload]]];   // "10 of 10"
//     [queue reset];                                                 // a new backup: "0 of 0"
//
// After (Swift): the same counters, which run on across the batches until `reset()`.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port: one backup upload.
func backupUpload(_ name: String, to url: URL) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.addData(Data(name.utf8), withFileName: name, andContentType: "text/plain", forKey: "file")
    Example.prepareToSend(request)
    return request
}

@Suite("55.11 Queue totals run on until reset")
struct QueueTotalsRunOnExample {
    @Test func tenOfTenThenReset() async throws {
        try await Example.withReceiver { receiver in
            let queue = NetworkQueue()
            for index in 0..<5 { try queue.addOperation(backupUpload("file\(index).txt", to: receiver.url("/backup"))) }
            await Example.drain(queue)
            for index in 5..<10 {
                try queue.addOperation(backupUpload("file\(index).txt", to: receiver.url("/backup")))
                await Example.drain(queue)
            }
            #expect("\(queue.bytesUploadedSoFar) of \(queue.totalBytesToUpload)" == "10 of 10")
            #expect(queue.totalBytesToDownload == 10)
            #expect(queue.uploadProgress.fractionCompleted == 1.0)
            #expect(receiver.requests.count == 10)
            queue.reset()
            #expect("\(queue.bytesUploadedSoFar) of \(queue.totalBytesToUpload)" == "0 of 0")
            #expect(queue.uploadProgress.fractionCompleted == 0)
            try queue.addOperation(backupUpload("again.txt", to: receiver.url("/backup")))
            #expect("\(queue.bytesUploadedSoFar) of \(queue.totalBytesToUpload)" == "0 of 1")
            await Example.drain(queue)
            #expect(queue.uploadProgress.fractionCompleted == 1.0)
        }
    }
}
