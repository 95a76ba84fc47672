// Before (Objective-C, ASIHTTPRequest) — a batch of photos behind one progress bar:
//
//     ASINetworkQueue *queue = [ASINetworkQueue queue];
//     [queue setDelegate:self];
//     [queue setRequestDidFinishSelector:@selector(photoUploaded:)];
//     [queue setQueueDidFinishSelector:@selector(allUploaded:)];
//     [queue setUploadProgressDelegate:progressView];
//     [queue setShowAccurateProgress:YES];
//     for (NSString *path in photos) {
//         ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//         [request setFile:path forKey:@"photo"];
//         [queue addOperation:request];
//     }
//     [queue go];
//
// After (Swift): `NetworkQueue` with a `NetworkQueueDelegate`; the progress bar reads
// `queue.uploadProgress` (a `Progress` in bytes with `showAccurateProgress`, ending at 1.0).

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port: the app's delegate, told of each upload and of the end of the batch.
final class PhotoBatchDelegate: NetworkQueueDelegate, @unchecked Sendable {
    let uploaded = Tally<Int>(0)
    let finished = Tally<Int>(0)
    func requestFinished(_ request: FormDataRequest) { uploaded.update { $0 += 1 } }
    func queueFinished(_ queue: NetworkQueue) { finished.update { $0 += 1 } }
}

/// The port of the loop: one request per photo, in one queue showing accurate progress.
func photoQueue(photos: [URL], to url: URL, delegate: PhotoBatchDelegate) throws -> NetworkQueue {
    let queue = NetworkQueue.queue()
    queue.delegate = delegate
    queue.showAccurateProgress = true
    for photo in photos {
        let request = FormDataRequest(url: url)
        try request.setFile(photo.path, forKey: "photo")
        Example.prepareToSend(request)
        try queue.addOperation(request)
    }
    return queue
}

@Suite("23 A queue of photo uploads")
struct QueueOfPhotoUploadsExample {
    @Test func oneProgressBarForTheBatch() async throws {
        try await Example.withDirectory { directory in
            let photos = try (0..<3).map { try Example.write(Example.photoBytes, named: "photo\($0).jpg", in: directory) }
            try await Example.withReceiver { receiver in
                let delegate = PhotoBatchDelegate()
                let queue = try photoQueue(photos: photos, to: receiver.url("/photos"), delegate: delegate)
                // Sized before anything is sent: the bar has its whole length from the start.
                #expect(queue.totalBytesToUpload > 3 * UInt64(Example.photoBytes.count))
                #expect(queue.uploadProgress.fractionCompleted == 0)
                await Example.drain(queue)
                #expect(queue.uploadProgress.fractionCompleted == 1.0)
                #expect(queue.bytesUploadedSoFar == queue.totalBytesToUpload)
                #expect(delegate.uploaded.current == 3)
                #expect(delegate.finished.current == 1)
                #expect(receiver.requests.compactMap { $0.form?.file("photo")?.data }.allSatisfy { $0 == Example.photoBytes })
                #expect(receiver.requests.count == 3)
            }
        }
    }
}
