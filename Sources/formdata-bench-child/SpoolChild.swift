import FormDataKit
import Foundation

/// W3: a form of ten fields and the given files, built and spooled once to its temporary file
/// (removed when the request is released at exit).
enum SpoolChild {
    static func run(files: [String]) throws {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/upload")!)
        for index in 0..<10 { request.addPostValue("value \(index) — ünïcödé", forKey: "field\(index)") }
        for (index, file) in files.enumerated() { try request.addFile(file, forKey: "file\(index)") }
        try request.buildPostBody()
        guard let path = request.postBodyFilePath,
              let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? UInt64,
              size == request.postLength
        else { throw ChildError.failed("spooled size does not match postLength") }
    }
}
