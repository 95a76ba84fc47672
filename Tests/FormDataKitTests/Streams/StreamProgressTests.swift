import FormDataKitTesting
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// Progress of a body whose length is not known until its stream ends: the blocks and the
/// `Progress` say so (a length of 0, a total of all the units there are) and end at what was sent.
@Suite("Streamed parts: progress of an unknown length")
struct StreamProgressTests {
    @Test(
        "uploadProgressBlock says length 0 while the length is unknown, then (sent, sent) once; uploadProgress ends at 1.0 of what was sent"
    )
    func unknownLengthProgress() async throws {
        try await TransportTestSupport.withReceiver { receiver in
            let request = FormDataRequest(url: receiver.url("/upload"))
            request.transport = CurlTransport()
            request.timeOutSeconds = TransportTestSupport.patientTimeout
            request.addPostValue("v", forKey: "field")
            request.addStream(
                InputStream(data: Data(repeating: 0x73, count: 300_000)), withFileName: "s.bin", andContentType: nil, forKey: "s")
            let calls = Locked<[(sent: UInt64, length: UInt64)]>([])
            let sizes = Locked<[Int64]>([])
            request.uploadProgressBlock = { sent, length in calls.withLock { $0.append((sent, length)) } }
            request.uploadSizeIncrementedBlock = { size in sizes.withLock { $0.append(size) } }
            let response = try await request.start()
            #expect(response.statusCode == 200)
            let sent = try #require(receiver.requests.last).bodyBytes
            let made = calls.current
            #expect(made.last.map { $0.sent == UInt64(sent) && $0.length == UInt64(sent) } == true, "\(made.suffix(2))")
            #expect(made.dropLast().allSatisfy { $0.length == 0 }, "a length was guessed: \(made.prefix(3))")
            #expect(made.map(\.sent) == made.map(\.sent).sorted(), "progress went backwards")
            #expect(sizes.current.isEmpty, "an upload size was told for a body of unknown length: \(sizes.current)")
            #expect(request.uploadProgress.totalUnitCount == Int64(sent))
            #expect(request.uploadProgress.fractionCompleted == 1.0)
        }
    }
}
