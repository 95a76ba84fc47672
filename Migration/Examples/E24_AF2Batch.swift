// Before (Objective-C, AFNetworking 2.x) — a batch of uploads with "n of m" progress:
//
//     NSMutableArray *operations = [NSMutableArray array];
//     for (NSString *path in photos) {
//         NSURLRequest *request = [serializer multipartFormRequestWithMethod:@"POST" URLString:url
//             parameters:nil constructingBodyWithBlock:^(id<AFMultipartFormData> form) {
//                 [form appendPartWithFileURL:[NSURL fileURLWithPath:path] name:@"photo" error:nil];
//             } error:nil];
//         [operations addObject:[[AFHTTPRequestOperation alloc] initWithRequest:request]];
//     }
//     NSArray *batch = [AFURLConnectionOperation batchOfRequestOperations:operations
//         progressBlock:^(NSUInteger done, NSUInteger total) { label.text = …; }
//         completionBlock:^(NSArray *operations) { … }];
//     [[NSOperationQueue mainQueue] addOperations:batch waitUntilFinished:NO];
//
// After (Swift): the same names in FormDataKitAF; the operations run on any `OperationQueue`.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
import Testing

/// The port: one operation per photo, batched.
func photoBatch(
    photos: [URL], to url: URL, progress: @escaping AFURLConnectionOperation.BatchProgressBlock,
    completion: @escaping AFURLConnectionOperation.BatchCompletionBlock
) throws -> [Operation] {
    let serializer = AFHTTPRequestSerializer.serializer()
    let operations = try photos.map { photo in
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: url.absoluteString, parameters: nil) { form in
            try form.appendPart(withFileURL: photo, name: "photo")
        }
        return AFHTTPRequestOperation(request: request, transport: Example.transport) as AFURLConnectionOperation
    }
    return AFURLConnectionOperation.batchOfRequestOperations(operations, progressBlock: progress, completionBlock: completion)
}

@Suite("24 An AFNetworking 2 batch")
struct AF2BatchExample {
    @Test func progressCountsFinishedOperations() async throws {
        try await Example.withDirectory { directory in
            let photos = try (0..<3).map { try Example.write(Example.photoBytes, named: "p\($0).jpg", in: directory) }
            try await Example.withReceiver { receiver in
                let steps = Tally<[String]>([])
                let batch = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                    do {
                        let operations = try photoBatch(
                            photos: photos, to: receiver.url("/photos"),
                            progress: { done, total in steps.update { $0.append("\(done) of \(total)") } },
                            completion: { finished in continuation.resume(returning: finished.count) })
                        let queue = OperationQueue()
                        for operation in operations { queue.addOperation(operation) }
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
                #expect(batch == 3)
                #expect(steps.current == ["1 of 3", "2 of 3", "3 of 3"])
                #expect(receiver.requests.compactMap { $0.form?.file("photo")?.data } == Array(repeating: Example.photoBytes, count: 3))
            }
        }
    }
}
