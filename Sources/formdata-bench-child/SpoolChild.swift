import FormDataKit
import Foundation

/// W3: a form of ten fields and the given files, built and spooled once to its temporary file
/// (removed when the request is released at exit).
enum SpoolChild {
    static func run(files: [String]) throws {
        let request = try W3Form.request(files: files)
        try request.buildPostBody()
        guard let path = request.postBodyFilePath,
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? UInt64,
            size == request.postLength
        else { throw ChildError.failed("spooled size does not match postLength") }
    }
}
