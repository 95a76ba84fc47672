import FormDataKit
import Foundation

/// The W3 form every child that builds it uses (spool, spool-copy, w4): ten fields with
/// non-ASCII values, then the files as `file0`, `file1`, … (the Python and multipart-kit peers
/// build the same form).
enum W3Form {
    static func request(files: [String]) throws -> FormDataRequest {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1/upload")!)
        for index in 0..<10 { request.addPostValue("value \(index) — ünïcödé", forKey: "field\(index)") }
        for (index, file) in files.enumerated() { try request.addFile(file, forKey: "file\(index)") }
        return request
    }
}
