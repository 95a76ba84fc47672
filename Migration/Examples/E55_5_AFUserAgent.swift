// Before (Objective-C, AFNetworking 3) — a check-in client whose API gateway refuses requests
// without a User-Agent and whose logs group clients by it. AFNetworking's serializer set one from
// the app bundle (`CheckIn/2.3 (iPhone; iOS 9.3; Scale/2.00)`), so the code never mentioned it:
//
//     AFHTTPSessionManager *manager = [[AFHTTPSessionManager alloc] initWithBaseURL:apiURL];
//     [manager POST:@"checkins" parameters:@{@"venue": @"42"} progress:nil
//           success:^(NSURLSessionDataTask *task, id responseObject) { … } failure:…];
//
//     AFHTTPRequestOperation *operation = [[AFHTTPRequestOperation alloc] initWithRequest:
//         [NSURLRequest requestWithURL:[apiURL URLByAppendingPathComponent:@"ping"]]];
//     [queue addOperation:operation];
//
// After (Swift, FormDataKitAF): the same calls. AFNetworking had no User-Agent rule off Apple
// platforms, so on Linux the serializer sets none; every request a manager or an operation sends
// without one gets `FormDataRequest.defaultUserAgentString` (`<process name> (FormDataKit)`), the
// same as a `FormDataRequest`, whichever transport sends it. To keep the app's own, set it once on
// the serializer (or per request in `headers:`); a User-Agent that is set is never replaced.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The port's check-in: the manager's POST; returns whether it succeeded.
func checkIn(_ manager: AFHTTPSessionManager) async -> Bool {
    await withCheckedContinuation { continuation in
        manager.post(
            "checkins", parameters: ["venue": "42"], progress: nil, success: { _, _ in continuation.resume(returning: true) },
            failure: { _, _ in continuation.resume(returning: false) })
    }
}

/// The port's ping: an AF 2 operation for a bare request; returns whether it succeeded.
func ping(_ url: URL) async -> Bool {
    let operation = AFHTTPRequestOperation(request: URLRequest(url: url))
    return await withCheckedContinuation { continuation in
        operation.setCompletionBlockWithSuccess(
            { _, _ in continuation.resume(returning: true) }, failure: { _, _ in continuation.resume(returning: false) })
        OperationQueue().addOperation(operation)
    }
}

@Suite("55.5 AF requests carry a User-Agent")
struct AFUserAgentExample {
    /// What a request without a User-Agent of its own goes out with here: AFNetworking's format
    /// on Apple platforms (the serializer's), FormDataKit's default elsewhere.
    static let expected =
        AFHTTPRequestSerializer.serializer().value(forHTTPHeaderField: "User-Agent") ?? FormDataRequest.defaultUserAgentString

    @Test func theDefaultTransportSendsOne() async throws {
        try await Example.withReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: receiver.baseURL)  // the default transport
            #expect(await checkIn(manager))
            #expect(receiver.lastRequest?.header("User-Agent") == Self.expected)
            #expect(await ping(receiver.url("/ping")))
            #expect(receiver.lastRequest?.header("User-Agent") == FormDataRequest.defaultUserAgentString)
            #expect(FormDataRequest.defaultUserAgentString == "\(ProcessInfo.processInfo.processName) (FormDataKit)")
        }
    }

    @Test func theAppsOwnIsKept() async throws {
        try await Example.withReceiver { receiver in
            let manager = AFHTTPSessionManager(baseURL: receiver.baseURL)
            manager.requestSerializer.setValue("CheckIn/2.3 (Linux)", forHTTPHeaderField: "User-Agent")
            #expect(await checkIn(manager))
            #expect(receiver.lastRequest?.headers.filter { $0.name.lowercased() == "user-agent" }.map(\.value) == ["CheckIn/2.3 (Linux)"])
        }
    }
}
