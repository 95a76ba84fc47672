import FormDataKit
import FormDataKitAF
import Foundation
import Testing

/// Resumable uploads through the AF managers' settings: they resume as FormDataRequest does (a
/// transport that cannot resume refusing the setting is Migration/Examples' E27).
extension Reliability {
    @Suite("Resumable uploads: façades", .enabled(if: ResumableRun.serverBuilt, ResumableRun.withoutTrait))
    struct ResumableUploadFacadeTests {
        @Test("an AFHTTPSessionManager multipart upload cut once is resumed and arrives whole")
        func afManagerResumes() async throws {
            let content = Self.pseudoRandom(count: 8 << 20)
            let path = NSTemporaryDirectory() + "af-resume-\(UUID().uuidString)"
            try content.write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let run = try await ResumableRun.start(cuts: [3_000_000])
            let manager = AFHTTPSessionManager(baseURL: run.url("/"), sessionConfiguration: nil, transport: CurlTransport())
            manager.shouldResumeInterruptedUploads = true
            manager.numberOfTimesToResumeUpload = 2
            let answer: Result<[String: String], any Error> = await withCheckedContinuation { continuation in
                manager.post(
                    "upload", parameters: ["field": "value"], headers: nil,
                    constructingBodyWith: { form in
                        try form.appendPart(
                            withFileURL: URL(fileURLWithPath: path), name: "file", fileName: "data.bin",
                            mimeType: "application/octet-stream")
                    }, progress: nil,
                    success: { _, object in
                        let fields = (object as? [String: Any])?.compactMapValues { $0 as? String } ?? [:]
                        continuation.resume(returning: .success(fields))
                    },
                    failure: { _, error in continuation.resume(returning: .failure(error)) })
            }
            let object = try answer.get()
            let stored = object["file"].flatMap { FileManager.default.contents(atPath: $0) }
            let relay = await run.stop()
            #expect(relay["cutsDone"] as? Int == 1, "\(relay)")
            #expect(stored?.range(of: content) != nil, "the file part arrived whole in the stored body: \(String(describing: object))")
            #expect(Int(object["bytes"] ?? "") == stored?.count)
        }

        @Test("an AFHTTPRequestOperationManager (AF 2) multipart upload cut once is resumed and arrives whole")
        func afOperationManagerResumes() async throws {
            let content = Self.pseudoRandom(count: 8 << 20)
            let path = NSTemporaryDirectory() + "af2-resume-\(UUID().uuidString)"
            try content.write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let run = try await ResumableRun.start(cuts: [3_000_000])
            let manager = AFHTTPRequestOperationManager(baseURL: run.url("/"), transport: CurlTransport())
            manager.shouldResumeInterruptedUploads = true
            let answer: Result<[String: String], any Error> = await withCheckedContinuation { continuation in
                let operation = manager.post(
                    "upload", parameters: ["field": "value"],
                    constructingBodyWith: { form in
                        try form.appendPart(
                            withFileURL: URL(fileURLWithPath: path), name: "file", fileName: "data.bin",
                            mimeType: "application/octet-stream")
                    },
                    success: { _, object in
                        let fields = (object as? [String: Any])?.compactMapValues { $0 as? String } ?? [:]
                        continuation.resume(returning: .success(fields))
                    },
                    failure: { _, error in continuation.resume(returning: .failure(error)) })
                #expect(operation?.shouldResumeInterruptedUploads == true)
            }
            let object = try answer.get()
            let stored = object["file"].flatMap { FileManager.default.contents(atPath: $0) }
            let relay = await run.stop()
            #expect(relay["cutsDone"] as? Int == 1, "\(relay)")
            #expect(stored?.range(of: content) != nil, "the file part arrived whole: \(object)")
        }

        /// `count` bytes of xorshift output.
        static func pseudoRandom(count: Int) -> Data {
            var state: UInt64 = 0x2545_F491_4F6C_DD1D
            var bytes = [UInt8](repeating: 0, count: count)
            for index in 0..<count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                bytes[index] = UInt8(truncatingIfNeeded: state)
            }
            return Data(bytes)
        }
    }
}
