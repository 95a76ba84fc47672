import Foundation
import FormDataKit
import Testing

@Suite("A request's uploadProgress as a Progress")
struct UploadProgressTests {
    @Test("discrete: not attached to the Progress current where the send starts; addChild attaches it")
    func uploadProgressIsDiscrete() async throws {
        let transport = ScriptedTransport([.success(FakeTransportTests.ok)])
        let request = FormDataRequest(url: URL(string: "http://example.invalid/upload")!)
        request.transport = transport
        request.setPostValue("value", forKey: "key")
        let current = Progress(totalUnitCount: 1)
        // becomeCurrent is per thread: the send starts on the thread that made `current` current.
        let (error, fractionWhileCurrent) = await TransportTestSupport.blocking { () -> (FormDataError?, Double) in
            current.becomeCurrent(withPendingUnitCount: 1)
            let error = request.startSynchronous()
            let fraction = current.fractionCompleted
            current.resignCurrent()
            return (error, fraction)
        }
        #expect(error == nil)
        #expect(request.uploadProgress.fractionCompleted == 1.0)
        // Attached implicitly, the finished send would have completed the current Progress.
        try #require(fractionWhileCurrent == 0)
        let parent = Progress(totalUnitCount: 1)
        parent.addChild(request.uploadProgress, withPendingUnitCount: 1)
        #expect(parent.fractionCompleted == 1.0)
    }
}
