// Before (Objective-C, ASIHTTPRequest) — a gallery app tags each upload with what it is for and
// reads it back when the upload ends; the cover photo goes first:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setUserInfo:[NSDictionary dictionaryWithObject:photoID forKey:@"photoID"]];
//     [request setTag:row];
//     if (isCover) [request setQueuePriority:NSOperationQueuePriorityHigh];
//     [request setFile:path forKey:@"photo"];
//     [queue addOperation:request];
//     …
//     - (void)uploadDone:(ASIHTTPRequest *)request {
//         NSString *photoID = [[request userInfo] objectForKey:@"photoID"];
//         [self markRow:[request tag] uploaded:photoID];
//     }
//
// After (Swift): the same three properties; `userInfo` holds `Sendable` values.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port: one upload, tagged; the cover one first.
func galleryUpload(photoID: String, row: Int, isCover: Bool, to url: URL) -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.userInfo = ["photoID": photoID]
    request.tag = row
    if isCover { request.queuePriority = .high }
    request.addData(Data(photoID.utf8), withFileName: "\(photoID).jpg", andContentType: "image/jpeg", forKey: "photo")
    Example.prepareToSend(request)
    return request
}

@Suite("55.1 userInfo, tag and queuePriority")
struct RequestUserInfoAndTagExample {
    @Test func completionReadsUserInfoAndTagAndTheCoverGoesFirst() async throws {
        try await Example.withReceiver { receiver in
            let done = Tally<[String]>([])
            let queue = NetworkQueue()
            queue.maxConcurrentOperationCount = 1
            for (row, photoID) in ["p1", "p2", "cover"].enumerated() {
                let request = galleryUpload(photoID: photoID, row: row, isCover: photoID == "cover", to: receiver.url("/photos"))
                request.completionBlock = { [request] in
                    let id = request.userInfo?["photoID"] as? String ?? "?"
                    done.update { $0.append("\(request.tag):\(id)") }
                }
                try queue.addOperation(request)
            }
            await Example.drain(queue)
            #expect(done.current == ["2:cover", "0:p1", "1:p2"])
            #expect(receiver.requests.compactMap { $0.form?.file("photo")?.fileName } == ["cover.jpg", "p1.jpg", "p2.jpg"])
        }
    }
}
