// Before (Objective-C, ASIHTTPRequest) — the delegate updates UI state; ASI called it on the
// main thread:
//
//     - (void)requestFinished:(ASIHTTPRequest *)request { self.statusLabel.text = @"Uploaded"; }
//     - (void)requestFailed:(ASIHTTPRequest *)request   { self.statusLabel.text = @"Failed"; }
//
// After (Swift, FormDataKit): the delegate and blocks run on `callbackQueue` — the main queue by
// default on Apple platforms; on Linux a private serial queue unless set. A port that touches UI
// state sets `request.callbackQueue = .main` (here, a serial "UI" queue stands in for it, so the
// example checks where each call ran).

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The "view": state that must only be touched on its queue.
final class UploadStatusView: FormDataRequestDelegate, @unchecked Sendable {
    // `@unchecked`: `status` and `touchedOffQueue` are touched only on `queue` (checked below).
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()
    private(set) var status = "Idle"
    private(set) var touchedOffQueue = false

    init(queue: DispatchQueue) {
        self.queue = queue
        queue.setSpecific(key: key, value: true)
    }

    private func show(_ text: String) {
        if DispatchQueue.getSpecific(key: key) != true { touchedOffQueue = true }
        status = text
    }

    func requestStarted(_ request: FormDataRequest) { show("Uploading…") }
    func requestFinished(_ request: FormDataRequest) { show("Uploaded (\(request.responseStatusCode))") }
    func requestFailed(_ request: FormDataRequest) { show("Failed: \(request.error?.asiDescription ?? "")") }
}

@Suite("20 A delegate that updates UI state on the callback queue")
struct DelegateOnCallbackQueueExample {
    @Test func everyCallOnTheUIQueue() async throws {
        let ui = DispatchQueue(label: "example.ui")
        let view = UploadStatusView(queue: ui)
        try await Example.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/upload"))
            Example.prepareToSend(request)
            request.callbackQueue = ui  // `.main` in an app
            request.delegate = view
            request.setPostValue("1", forKey: "a")
            _ = try await request.start()  // returns after the callbacks ran
        }
        let (status, offQueue) = ui.sync { (view.status, view.touchedOffQueue) }
        #expect(status == "Uploaded (200)")
        #expect(!offQueue)
    }
}
